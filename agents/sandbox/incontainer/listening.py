"""Which TCP ports are listened on, from /proc (Linux): how a block that starts a server is told from one that hangs.
Standard library only: the warm runner (agents/sandbox/runner.py) carries this file's text inside the container,
where every listening socket of the network namespace is the sandbox's; the local executor asks which of them its
block's processes hold."""

import os

TABLES = ("/proc/net/tcp", "/proc/net/tcp6")
LISTEN = "0A"
"""The state of a listening socket in /proc/net/tcp."""


def listening():
    """{socket inode: port} of the TCP sockets listening in this network namespace ({} where /proc cannot say)."""
    found = {}
    for table in TABLES:
        try:
            with open(table) as fh:
                lines = fh.read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) > 9 and fields[3] == LISTEN:
                try:
                    found[int(fields[9])] = int(fields[1].rsplit(":", 1)[1], 16)
                except ValueError:
                    continue
    return found


def session_sockets(sid):
    """The socket inodes held open by the processes of session `sid` (a block started with start_new_session)."""
    held = set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as fh:
                stat = fh.read()
            if int(stat[stat.rindex(")") + 2:].split()[3]) != sid:
                continue
            fds = os.listdir(f"/proc/{pid}/fd")
        except (OSError, ValueError, IndexError):
            continue
        for fd in fds:
            try:
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if link.startswith("socket:["):
                held.add(int(link[8:-1]))
    return held


class ServerWatch:
    """Watches a running block for a new listening port and says when a server has been left long enough: once it
    has listened and printed nothing for `grace` seconds (None: never; what it leaves listening is still told).
    `sid`: only sockets of that session count (the local executor, which shares the host's network namespace);
    None: every new one (the container's own namespace)."""

    def __init__(self, grace, started, sid=None):
        self.grace, self.started, self.sid = grace, started, sid
        self.known = set(listening())
        self.server = None
        self.listened_at = self.polled = self.quiet_since = started

    def output(self, now):
        """The block printed something at `now`."""
        self.quiet_since = now

    def poll(self, now, force=False):
        """Look for a new listening port (every 0.1 s at the most, unless `force`); True when the server should be
        stopped now."""
        if self.server is None and (force or now - self.polled >= 0.1):
            self.polled = now
            new = {inode: port for inode, port in listening().items() if inode not in self.known}
            if new and self.sid is not None:  # another process's listener is known from now on: looked at once
                held = session_sockets(self.sid)
                self.known |= set(new) - held
                new = {inode: port for inode, port in new.items() if inode in held}
            if new:
                self.server = {"port": min(new.values()), "listen_s": round(now - self.started, 2),
                               "grace_s": self.grace}
                self.listened_at = now
        return self.server is not None and self.grace is not None and \
            now - max(self.listened_at, self.quiet_since) >= self.grace

    def stopped(self, now):
        """The report of a server stopped at `now` (None when the block never listened)."""
        if self.server is None:
            return None
        return {**self.server, "stopped_s": round(now - self.started, 2)}

    def left_listening(self):
        """Whether a port the block opened is still listened on (after the block: something it left running)."""
        new = {inode for inode in listening() if inode not in self.known}
        return bool(new and (self.sid is None or new & session_sockets(self.sid)))

    def ended(self, now):
        """After the block: the server it left listening in the background (for the caller to stop), else None."""
        self.poll(now, force=True)
        return {**self.stopped(now), "left": True} if self.left_listening() else None
