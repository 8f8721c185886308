# ibv_devinfo: the node's RDMA devices (state/node.env's RDMA; the names the fleets' launchers spell), each
# active on port 1, as scripts grep them (`grep hca_id:`).
. "$_standin_root/state/node.env"
IFS=, read -r -a _devices <<< "$RDMA"
for _d in "${_devices[@]}"; do
    printf 'hca_id:\t%s\n\ttransport:\t\t\tInfiniBand (0)\n\tphys_port_cnt:\t\t\t1\n\t\tport:\t1\n' "$_d"
    printf '\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tlink_layer:\t\tEthernet\n\n'
done
