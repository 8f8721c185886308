# ip: on a node of a multi-node job (STANDIN_NODE, set by shims/srun.sh), `ip route get ADDR` answers with the
# node's own address as the source (how launchers learn a node's address); elsewhere, and for every other
# question, the machine's own ip program.
if [[ -n "${STANDIN_NODE:-}" && "$1 $2" == "route get" ]]; then
    printf '%s via %s dev lo src %s uid %s \n    cache \n' "${3:-0.0.0.0}" "$STANDIN_NODE_ADDR" "$STANDIN_NODE_ADDR" "$UID"
    exit 0
fi
exec "$_standin_ip" "$@"
