# sbcast: copies the file to the job's node, which is this one.
_args=()
for _a in "$@"; do [[ "$_a" == -* ]] || _args+=("$_a"); done
(( ${#_args[@]} == 2 )) || { echo "sbcast: expected SOURCE DEST" >&2; exit 1; }
cp -- "${_args[0]}" "${_args[1]}"
