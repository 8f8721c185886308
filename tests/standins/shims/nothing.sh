# pip, pip3, lm_eval, aiperf: install, evaluate and replay nothing. uv: `uv venv DIR` makes a venv whose python,
# hf and aiperf are the stand-ins (the agentic recipes install AIPerf into one and run it from there).
if [[ "${0##*/} $1" == "uv venv" ]]; then
    _dir=.venv
    shift
    while (( $# )); do
        case "$1" in
            --python|-p|--prompt|--index-url|--cache-dir) shift ;;
            -*) ;;
            *) _dir=$1 ;;
        esac
        shift
    done
    mkdir -p "$_dir/bin" && : > "$_dir/bin/activate"
    for _tool in python python3 hf aiperf; do
        _target=$_tool
        [[ "$_tool" == python ]] && _target=python3
        printf '#!/bin/bash\nexec %q "$@"\n' "$_standin_root/bin/$_target" > "$_dir/bin/$_tool"
        chmod +x "$_dir/bin/$_tool"
    done
fi
exit 0
