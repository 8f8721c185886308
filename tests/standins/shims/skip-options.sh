# mpirun, numactl, sudo: run the command after the options, once, as this user.
case "${0##*/}" in
    mpirun) _valued=" -n -np -N -x -H --host --hostfile --bind-to --map-by --mca -mca --rank-by -c --npernode " ;;
    numactl) _valued=" -N -m -C -p -i " ;;
    *) _valued=" -u -g -C -D -h -p -r -t -U -T " ;;
esac
while (( $# )); do
    case "$1" in
        --mca|-mca) shift 3; continue ;;
        -*) if [[ "$_valued" == *" $1 "* ]]; then shift 2; else shift; fi ;;
        *) break ;;
    esac
done
(( $# )) || exit 0
exec "$@"
