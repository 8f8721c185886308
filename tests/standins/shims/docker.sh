# docker: `run` starts the command as a container (programs/container.py); housekeeping verbs succeed quietly.
case "$1" in
    run) STANDIN_CALL="$_standin_call" exec "$_standin_python" -S -E "$_standin_root/lib/main.py" "$_standin_root" \
        docker "$@" ;;
    ps|images) for _a in "$@"; do [[ "$_a" == -*q* ]] && exit 0; done
        echo "CONTAINER ID   IMAGE     COMMAND   CREATED   STATUS    PORTS     NAMES" ;;
    info) echo "Server Version: 27.0.0-standin" ;;
    version) echo "Docker version 27.0.0-standin" ;;
    stop|rm|kill|pull|network|volume|system|container|image|login|logout|inspect|wait|logs|exec|cp|tag|rmi|build|buildx) ;;
    *) echo "docker: '$1' is not a docker command (stand-in)" >&2; exit 1 ;;
esac
exit 0
