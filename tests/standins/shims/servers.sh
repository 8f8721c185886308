# vllm, sglang, trtllm-serve, vllm-router, lmcache, mooncake_master, and llm-d's pd-sidecar, epp and envoy:
# `vllm serve`, `sglang serve`, `trtllm-serve [serve]`, the routers, `lmcache server`, the Mooncake master and
# llm-d's proxies start a stand-in server (programs/server.py) on the ports their options (envoy: its
# configuration's listeners) name; other verbs do nothing.
_program=${0##*/}
case "$_program $1" in
    "vllm serve"|"sglang serve"|"trtllm-serve serve"|"lmcache server") _kind=${_program%%-*}; shift ;;
    "trtllm-serve "*) _kind=trtllm ;;
    "vllm-router "*) _kind=router ;;
    "mooncake_master "*) _kind=mooncake ;;
    "pd-sidecar "*) _kind=sidecar ;;
    "epp "*) _kind=epp ;;
    "envoy "*) _kind=envoy ;;
    *) exit 0 ;;
esac
STANDIN_CALL="$_standin_call" exec "$_standin_python" -S -E "$_standin_root/lib/main.py" "$_standin_root" \
    "server:$_kind" "$@"
