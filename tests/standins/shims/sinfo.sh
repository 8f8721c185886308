# sinfo: one idle node.
echo "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST"
echo "compute*     up   infinite      1   idle $HOSTNAME"
