# aiperf: `aiperf profile ...` replays the agentic trace against the server and writes its artifacts
# (lib/aiperf.py); anything else (--version, a plugin listing) does nothing.
if [[ "$1" == profile ]]; then
    STANDIN_CALL="$_standin_call" exec "$_standin_python" -S -E "$_standin_root/lib/main.py" "$_standin_root" aiperf \
        "${@:2}"
fi
exit 0
