# enroot: `import -o FILE docker://IMAGE` writes an empty squash file; the rest succeeds.
if [[ "$1" == import ]]; then
    while (( $# )); do
        if [[ "$1" == -o || "$1" == --output ]]; then : > "$2"; exit 0; fi
        shift
    done
fi
exit 0
