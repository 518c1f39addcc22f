#!/bin/sh
# Starts one container of the two-rank deployment (docker/docker-compose.ranks.yml).
#   ranks-entrypoint.sh worker            a rank host: sshd on port 2222, as the unprivileged
#                                         user, accepting only the launcher's key, so that mpirun
#                                         can start this host's rank here
#   ranks-entrypoint.sh launcher ARGS...  rank 0's host: makes the key, waits for every worker's
#                                         sshd, then runs `mpirun ... snapstream serve --tp N ARGS`
# SNAPSTREAM_RANK_HOSTS lists the hosts, the launcher's first (default: rank0,rank1), and
# SNAPSTREAM_RANK_INTERFACE the network interface the ranks talk over (default: eth0); the key
# pair lives in the shared volume at /ranks-keys.
set -eu
keys=/ranks-keys
hosts=${SNAPSTREAM_RANK_HOSTS:-rank0,rank1}
ssh_options="-p 2222 -i $keys/id_ed25519 -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR"

case "${1:-}" in
  worker)
    mkdir -p "$HOME/.ssh"
    [ -f "$HOME/host_key" ] || ssh-keygen -q -t ed25519 -N '' -f "$HOME/host_key"
    echo "ranks: waiting for the launcher's key in $keys" >&2
    while [ ! -f "$keys/id_ed25519.pub" ]; do sleep 1; done
    cp "$keys/id_ed25519.pub" "$HOME/.ssh/authorized_keys"
    chmod 700 "$HOME/.ssh" && chmod 600 "$HOME/.ssh/authorized_keys"
    exec /usr/sbin/sshd -D -e -p 2222 -h "$HOME/host_key" -o PidFile=none -o UsePAM=no \
      -o AuthorizedKeysFile="$HOME/.ssh/authorized_keys" -o PasswordAuthentication=no
    ;;
  launcher)
    shift
    [ -f "$keys/id_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -f "$keys/id_ed25519"
    count=0
    slots=""
    for host in $(echo "$hosts" | tr ',' ' '); do
      count=$((count + 1))
      slots="${slots:+$slots,}$host:1"
      [ "$count" -eq 1 ] && continue
      echo "ranks: waiting for $host's sshd" >&2
      # shellcheck disable=SC2086  # the options are words
      until ssh $ssh_options "$host" true 2>/dev/null; do sleep 1; done
    done
    mpirun --host "$slots" -np "$count" \
      --mca plm_rsh_agent ssh --mca plm_rsh_args "$ssh_options" \
      --mca btl self,tcp --mca btl_tcp_if_include "${SNAPSTREAM_RANK_INTERFACE:-eth0}" \
      --mca oob_tcp_if_include "${SNAPSTREAM_RANK_INTERFACE:-eth0}" \
      snapstream serve --tp "$count" "$@" &
    launcher=$!
    # A stop goes to rank 0, mpirun's local child: it shuts down gracefully, the other ranks end
    # with it, and mpirun exits with their status. Signalled itself, mpirun would exit 1 even
    # after a clean shutdown.
    trap 'pkill -TERM -P "$launcher" -x snapstream || kill -TERM "$launcher"' TERM INT
    while :; do
      status=0
      wait "$launcher" || status=$?
      kill -0 "$launcher" 2>/dev/null || break
    done
    exit "$status"
    ;;
  *)
    echo "usage: ranks-entrypoint.sh worker | launcher [serve arguments]" >&2
    exit 2
    ;;
esac
