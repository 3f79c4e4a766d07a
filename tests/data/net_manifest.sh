# Sourced by the network shell tests: net_manifest BINDING [LINE ...]
# prints a VirtualMachine "netvm" (1 vCPU, 64Mi) with one interface
# "default" on the pod network, bound with BINDING (bridge, masquerade,
# passtBinding: KubeVirt refuses the old passt field since v1.3), each LINE added to the interface (e.g. 'model: e1000').
net_manifest() {
	local binding=$1 line
	shift
	cat <<EOM
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: netvm, namespace: default}
spec:
  runStrategy: Always
  template:
    spec:
      domain:
        cpu: {cores: 1}
        memory: {guest: 64Mi}
        devices:
          interfaces:
          - name: default
            $binding: {}
EOM
	for line in "$@"; do
		echo "            $line"
	done
	echo "      networks: [{name: default, pod: {}}]"
}
