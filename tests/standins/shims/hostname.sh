# hostname: on a node of a multi-node job (STANDIN_NODE, set by shims/srun.sh), that node's name and address;
# elsewhere the machine's own hostname program.
if [[ -z "${STANDIN_NODE:-}" ]]; then exec "$_standin_hostname" "$@"; fi
case "${1:-}" in
    -i|-I|--ip-address|--all-ip-addresses) printf '%s\n' "$STANDIN_NODE_ADDR" ;;
    -s|--short) printf '%s\n' "${STANDIN_NODE%%.*}" ;;
    *) printf '%s\n' "$STANDIN_NODE" ;;
esac
