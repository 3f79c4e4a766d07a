#!/usr/bin/env bash
# accessCredentials in `vmlet run` (docs/manifests.md: Access
# credentials), with the tiny guest (it has no agent): without
# --secret-dir, with a missing Secret, or with a key planted as a link out
# of the Secret root, the VM does not start (exit 1, the reason named);
# with readable Secrets and a control socket the credential agent runs
# beside the guest as its own process (vmlet-creds), sees no agent
# connected, never holds the channel (a client of the guest-agent socket is
# the only one), and is gone when vmlet ends; the Secret's bytes never
# appear in vmlet's output or in resolve -o config.
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no /dev/kvm"
tiny_guests 0
vm_manifest creds 64Mi Once >"$TMPD/vm.yaml"
cat >>"$TMPD/vm.yaml" <<'YAML'
      accessCredentials:
      - sshPublicKey:
          source: {secret: {secretName: my-keys}}
          propagationMethod: {qemuGuestAgent: {users: [root]}}
      - userPassword:
          source: {secret: {secretName: my-pw}}
          propagationMethod: {qemuGuestAgent: {}}
YAML
SEC=$TMPD/secrets
mkdir -p "$SEC/my-keys" "$SEC/my-pw" "$TMPD/outside"
echo "ssh-ed25519 AAAAC3NzaTESTKEY walker@host" >"$SEC/my-keys/key1"
printf 'Pa55-TESTWORD' >"$SEC/my-pw/root"

run_vm() { # ARGS...: vmlet run the tiny guest in the background
	"$VMLET" run -f "$TMPD/vm.yaml" --kernel "$TMPD/mode0.elf" --log-format text "$@" \
		>"$TMPD/out" 2>"$TMPD/err" &
	PID=$!
}

"$VMLET" run -f "$TMPD/vm.yaml" --kernel "$TMPD/mode0.elf" >/dev/null 2>"$TMPD/err"
rc=$?
((rc == 1)) && grep -q -- "--secret-dir DIR" "$TMPD/err" && ok "no --secret-dir: refused, exit 1" ||
	fail "no --secret-dir: exit $rc, $(tail -2 "$TMPD/err")"

"$VMLET" run -f "$TMPD/vm.yaml" --kernel "$TMPD/mode0.elf" --secret-dir "$TMPD/outside" \
	>/dev/null 2>"$TMPD/err"
rc=$?
((rc == 1)) && grep -q "Secret 'my-keys'.*no such directory" "$TMPD/err" &&
	ok "a missing Secret: refused, exit 1" || fail "missing Secret: exit $rc, $(tail -2 "$TMPD/err")"

# a key planted as a link to a file outside the root
echo "root:x:0:0::/root:/bin/sh" >"$TMPD/outside/passwd"
mkdir -p "$TMPD/evil/my-keys" "$TMPD/evil/my-pw"
ln -s "$TMPD/outside/passwd" "$TMPD/evil/my-keys/key1"
printf x >"$TMPD/evil/my-pw/root"
"$VMLET" run -f "$TMPD/vm.yaml" --kernel "$TMPD/mode0.elf" --secret-dir "$TMPD/evil" \
	>/dev/null 2>"$TMPD/err"
rc=$?
((rc == 1)) && grep -q "leads out of the directory" "$TMPD/err" &&
	ok "a key linked out of the Secret root: refused, exit 1" ||
	fail "planted link: exit $rc, $(tail -2 "$TMPD/err")"

run_vm --secret-dir "$SEC" --api-socket "$TMPD/api.sock"
for _ in $(seq 600); do
	grep -q "tiny-guest: up" "$TMPD/out" && [[ -S $TMPD/api.sock ]] && break
	kill -0 "$PID" 2>/dev/null || break
	sleep 0.05
done
helper=$(ps -o pid=,comm= --ppid "$PID" | awk '$2 == "vmlet-creds" {print $1}')
[[ -n $helper ]] && ok "the credential agent runs beside the guest (pid $helper)" ||
	fail "no vmlet-creds child of $PID: $(ps -o pid,comm --ppid "$PID")"
st=$(grep -E '^(CapEff|CapBnd|NoNewPrivs):' "/proc/$helper/status" 2>/dev/null | tr -s '\t ' ' ')
[[ $st == *"CapEff: 0000000000000000"*"CapBnd: 0000000000000000"*"NoNewPrivs: 1"* ]] &&
	ok "vmlet-creds has no capabilities and no_new_privs" || fail "vmlet-creds: $st"
sleep 3 # a few of its polls: it asks the status, sees no agent, keeps off the channel
m=$("$VMLET" ctl "$TMPD/api.sock" metrics)
grep -q 'vmlet_channel_host_connected{channel="org.qemu.guest_agent.0"} 0' <<<"$m" &&
	ok "no agent connected: the credential agent does not hold the channel" ||
	fail "channel held: $(grep vmlet_channel_host <<<"$m")"
"$VMLET" ctl "$TMPD/api.sock" power-button >/dev/null
wait "$PID"
rc=$?
((rc == 0)) && ok "the guest powers off: exit 0" || fail "exit $rc: $(tail -3 "$TMPD/err")"
if [[ -n $helper ]] && kill -0 "$helper" 2>/dev/null; then
	fail "vmlet-creds $helper outlived vmlet"
	kill "$helper"
else
	ok "the credential agent ended with vmlet"
fi
if grep -q "TESTKEY\|TESTWORD" "$TMPD/out" "$TMPD/err" ||
	"$VMLET" resolve -f "$TMPD/vm.yaml" -o config 2>&1 | grep -q "TESTKEY\|TESTWORD"; then
	fail "a Secret's content reached the output"
else
	ok "no Secret content in vmlet's output or resolve -o config"
fi
finish
