# python3 / python: the server modules (sglang.launch_server, atom.entrypoints.openai_server,
# vllm.entrypoints.openai.api_server, sglang_router.launch_router) serve, utils/bench_serving/benchmark_serving.py
# benchmarks, `-m pip` and `-m lm_eval` do nothing, `-m venv DIR` makes a venv of stand-ins (lib/venv-lib.sh);
# everything else is the image's interpreter.
_args=("$@") _i=0
while (( _i < ${#_args[@]} )); do
    case "${_args[_i]}" in
        -X|-W) _i=$((_i + 2)) ;;
        -c|-m|-) break ;;
        -*) _i=$((_i + 1)) ;;
        *) break ;;
    esac
done
_rest=("${_args[@]:_i}")
_program=
case "${_rest[0]}" in
    -m)
        case "${_rest[1]}" in
            sglang.launch_server) _program=server:sglang ;;
            atom.entrypoints.openai_server) _program=server:atom ;;
            vllm.entrypoints.openai.api_server) _program=server:vllm ;;
            sglang_router.launch_router) _program=server:router ;;
            pip|lm_eval) exit 0 ;;
            venv) . "$_standin_root/lib/venv-lib.sh"
                for _a in "${_rest[@]:2}"; do [[ "$_a" == -* ]] || _dir=$_a; done
                _standin_venv "${_dir:?python3 -m venv: no directory}"
                exit 0 ;;
        esac
        _rest=("${_rest[@]:2}") ;;
    *bench_serving/benchmark_serving.py|benchmark_serving.py) _program=client; _rest=("${_rest[@]:1}") ;;
esac
if [[ -n "$_program" ]]; then
    STANDIN_CALL="$_standin_call" exec "$_standin_python" -S -E "$_standin_root/lib/main.py" "$_standin_root" \
        "$_program" "${_rest[@]}"
fi
# The image's packages import (lib/image/sitecustomize.py); the recorded environment is the one the caller gave.
# The workflow's PYTHONPYCACHEPREFIX is left out: this interpreter's bytecode is beside its sources (an image's
# is in the image), and a mirror empty in every job would have each call compile the standard library again
# (about 0.1 s CPU a call).
# It writes unbuffered (-u, which unlike PYTHONUNBUFFERED its children do not inherit): the AMD chain's sync.py
# closes its barrier port while a daemon thread is in accept(), and when that thread's traceback is on its way
# to a buffered stderr as the interpreter shuts down, Python aborts ("Fatal Python error: _enter_buffered_busy")
# and the barrier fails.  With the stand-in sleep it happened in about 1 multi-node run in 50.
unset PYTHONPYCACHEPREFIX
PYTHONPATH="$_standin_root/lib/image${PYTHONPATH:+:$PYTHONPATH}" exec "$_standin_image_python" -u "$@"
