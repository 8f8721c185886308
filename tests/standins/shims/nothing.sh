# pip, pip3, lm_eval: install and evaluate nothing. uv: `uv venv DIR` makes a venv of stand-ins
# (lib/venv-lib.sh; the agentic recipes install AIPerf into one and run it from there).
if [[ "${0##*/} $1" == "uv venv" ]]; then
    . "$_standin_root/lib/venv-lib.sh"
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
    _standin_venv "$_dir"
fi
exit 0
