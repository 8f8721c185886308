# ps: the real ps. Asked for the process group of a program started in the background a moment ago (`setsid cmd &`
# then `ps -o pgid= -p $!`, as server_sglang.sh does for each server it later group-kills), it answers once that
# program has left the caller's group, or after 0.5 s: on a node's idle cores the child's setsid has taken effect
# long before another program has started, which on a loaded test machine is not so (the recipe then kills its own
# group and leaves the server running, and the job never ends).
_stat_group() {  # the process group of process $1 (the fifth field of /proc/$1/stat; the name may hold spaces)
    local stat fields
    stat=$(< "/proc/$1/stat") 2>/dev/null || return 1
    read -r -a fields <<< "${stat##*) }"
    printf '%s' "${fields[2]}"
}
if [[ $# -eq 4 && "$1" == -o && "$2" == pgid= && "$3" == -p && "$4" =~ ^[0-9]+$ ]]; then
    _own=$(_stat_group $$)
    for _try in {1..50}; do
        _theirs=$(_stat_group "$4") || break
        [[ "$_theirs" != "$_own" ]] && break
        "$_standin_sleep" 0.01
    done
fi
exec "$_standin_ps" "$@"
