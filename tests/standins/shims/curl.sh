# curl: on a node of a multi-node job (STANDIN_NODE_ADDR, set by shims/srun.sh), a URL whose host means "this
# machine" (0.0.0.0, localhost) reaches the node's own address, where its servers listen (each node is a
# machine of its own); 127.0.0.1 is left as it is, for it is also the first node's address, which the other
# nodes reach it at. Elsewhere, and for every other URL, the machine's own curl as it is.
if [[ -n "${STANDIN_NODE_ADDR:-}" ]]; then
    _args=()
    for _a in "$@"; do
        if [[ "$_a" =~ ^(https?://)(0\.0\.0\.0|localhost)([:/].*)?$ ]]; then
            _a="${BASH_REMATCH[1]}${STANDIN_NODE_ADDR}${BASH_REMATCH[3]}"
        fi
        _args+=("$_a")
    done
    set -- "${_args[@]}"
fi
exec "$_standin_curl" "$@"
