# vllm, sglang, trtllm-serve, vllm-router, lmcache, mooncake_master: `vllm serve`, `sglang serve`,
# `trtllm-serve [serve]`, the routers, `lmcache server` and the Mooncake master start a stand-in server
# (programs/server.py) on the ports their options name; other verbs do nothing.
_program=${0##*/}
case "$_program $1" in
    "vllm serve"|"sglang serve"|"trtllm-serve serve"|"lmcache server") _kind=${_program%%-*}; shift ;;
    "trtllm-serve "*) _kind=trtllm ;;
    "vllm-router "*) _kind=router ;;
    "mooncake_master "*) _kind=mooncake ;;
    *) exit 0 ;;
esac
STANDIN_CALL="$_standin_call" exec "$_standin_python" -S -E "$_standin_root/lib/main.py" "$_standin_root" \
    "server:$_kind" "$@"
