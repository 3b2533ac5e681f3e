"""The inside of ``maker-box``: make the mounts of a step's boundary, then run its command.

Run by ``maker-box`` as ``python -I -S box_setup.py SPEC`` in a new user, mount and PID
(and, for ``net none``, network) namespace where it is root; imports only the standard
library, and calls ``mount(2)`` itself.

0. ``net none``: the namespace's loopback up, nothing else reachable. ``tmp``: ``/tmp``
   is the step's own folder (what the box needs under it seen through), ``/dev/shm`` new.
1. Each writable place (``rw``, ``temp``: the step's folder, temp folders, build caches,
   ``.git``) is bound onto itself: a mount point, which none can rename away.
2. Every other mount becomes read-only (``/proc`` and ``/dev`` in part: ``_KNOBS``).
3. Inside the writable places, what the step must never write (``ro``: ``plans/``,
   ``.git/config``, a ``.envrc``, …) is bound read-only; ``hide`` covers a file with
   ``/dev/null`` (the sealing key) or a folder with an empty one (sockets).
4. A second user and mount namespace, of the person's own id: the mounts come in locked,
   so nothing inside can make them writable, unmount them or bind what they cover
   elsewhere. The command (stdin: ``maker-box``'s here-document) runs there.

On macOS it runs the command under Seatbelt (``/usr/bin/sandbox-exec``) with a profile
of the same places (:func:`seatbelt`; ``/tmp`` and ``/dev/shm`` shared). It stays as the
box's first process: when the command ends (or it is told to stop: SIGTERM) it ends all
the command left running, then undoes what would run later outside the box
(``box_after.py``). Anything that fails ends the box with exit 126: nothing runs unboxed.
"""

from __future__ import annotations

import _signal as signal  # type: ignore[import-not-found]  # (not signal, fnmatch: ~7 ms)
import ctypes
import marshal
import os
import sys

TYPE_CHECKING = False  # (not typing's: its import costs every boxed call ~10 ms)
if TYPE_CHECKING:
    from typing import Any, NoReturn

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND = 1, 2, 4, 8, 32, 4096
MS_NOATIME, MS_NODIRATIME, MS_REC, MS_RELATIME, MS_STRICTATIME = 1024, 2048, 16384, 1 << 21, 1 << 24
CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
_FLAGS = {"nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC, "noatime": MS_NOATIME,
          "nodiratime": MS_NODIRATIME, "relatime": MS_RELATIME, "strictatime": MS_STRICTATIME}
SANDBOX_EXEC = "/usr/bin/sandbox-exec"  # (macOS's own, in a folder only the system writes)
_LEFT = ("/proc", "/dev")  # (their own kinds: devices, the fresh /proc)
# The kernel's own knobs (a person who is root is root in the box: a core pattern or a
# uevent helper written there runs as root outside it), and /dev's nodes (their devices
# still open, but none made or removed): read-only, as container engines make them.
_KNOBS = ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs", "/dev")
_libc = ctypes.CDLL(None, use_errno=True)
if sys.platform.startswith("linux"):
    _libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                            ctypes.c_ulong, ctypes.c_char_p]
    _libc.unshare.argtypes = [ctypes.c_int]


def fail(why: str) -> NoReturn:
    sys.stderr.write(f"maker-box: {why}; the command did not run\n")
    sys.exit(126)


def _enc(text: str | None) -> bytes | None:
    return None if text is None else os.fsencode(text)


def mount(source: str | None, target: str, fstype: str | None, flags: int,
          data: str | None = None) -> None:
    if _libc.mount(_enc(source), _enc(target), _enc(fstype), flags, _enc(data)) != 0:
        fail(f"cannot mount {target} ({os.strerror(ctypes.get_errno())})")


def unescape(field: str) -> str:
    """A mountinfo path: spaces, tabs, newlines and backslashes are octal escapes."""
    first, *rest = field.split("\\")
    return first + "".join(chr(int(part[:3], 8)) + part[3:] if part[:3].isdigit()
                           else "\\" + part for part in rest)


def mounts() -> list[tuple[str, int]]:
    """``[(mount point, its per-mount flags)]``, in the order they were made."""
    found = []
    with open("/proc/self/mountinfo", errors="surrogateescape") as info:  # (any name)
        for line in info:
            fields = line.split()
            flags = 0
            for option in fields[5].split(","):
                flags |= _FLAGS.get(option, 0)
            found.append((unescape(fields[4]), flags))
    return found


def flags_at(path: str) -> int:
    return next((f for p, f in reversed(mounts()) if p == path), 0)


def inside(path: str, roots: list[str] | tuple[str, ...]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def main() -> None:
    spec = {"ids": "0 0", "shell": "/bin/sh", "python": "", "unshare": "", "tmp": "", "net": ""}
    command = sys.stdin.read()
    after_class = _after()  # (read now: beside this file, which a private /tmp may hide)
    lists: dict[str, list[str]] = {k: [] for k in (
        "rw", "ro", "hide", "gitdir", "index", "git", "laterdir", "later", "deeper", "laterok",
        "laterokname", "laterskip", "since", "temp", "keep", "note")}
    with open(sys.argv[1]) as text:
        for line in text.read().splitlines():
            kind, _, value = line.partition(" ")
            if kind in lists:
                lists[kind].append(value)
            elif kind in spec:
                spec[kind] = value
            elif line:
                fail(f"spec line not understood: {line}")
    held = after_class.hold(lists)  # (what runs code later below the top: held)
    if lists["unfinished"]:  # (it could not look below the top: nothing runs)
        fail(lists["unfinished"][0])
    if sys.platform == "darwin":
        run([SANDBOX_EXEC, "-p", seatbelt({**lists, "ro": lists["ro"] + held}, spec["net"]),
             spec["shell"], "-c", command],
            lists, after_class, own_pids=False)
    if spec["net"] == "none":
        loopback_up()
    seen = private_tmp(spec["tmp"], lists) if spec["tmp"] else []
    if spec["tmp"] and os.path.isdir("/dev/shm"):  # (shared memory: its own)
        mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")
    for path in lists["rw"] + lists["temp"]:
        mount(path, path, None, MS_BIND | MS_REC)
    for path in seen:  # (after: a bind made in a read-only mount would be read-only)
        mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | flags_at(path))
    lists["rw"] += lists["temp"]
    for path, flags in mounts():
        if not inside(path, lists["rw"]) and not inside(path, _LEFT):
            mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | flags)
    table, optional = dict(mounts()), set(held)  # (the table read once: held may be many)
    for path in [*lists["ro"], *(k for k in _KNOBS if os.path.exists(k)), *held]:
        flags = next(table[p] for p in [path, *_folders_above(path), "/"] if p in table)
        if _libc.mount(_enc(path), _enc(path), None, MS_BIND | MS_REC, None) != 0:
            if path in optional:  # (gone meanwhile, another call's undo: not held)
                continue
            fail(f"cannot mount {path} ({os.strerror(ctypes.get_errno())})")
        mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | flags)
        table[path] = flags
    for path in lists["hide"]:
        if not os.path.lexists(path):
            continue  # (nothing there to hide: a socket's folder in the shared /tmp)
        if os.path.isdir(path):
            mount("tmpfs", path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV, "size=4k,mode=700")
        else:
            mount("/dev/null", path, None, MS_BIND)
    uid, gid = spec["ids"].split()
    if _libc.unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0:
        fail(f"cannot lock the mounts ({os.strerror(ctypes.get_errno())})")
    for name, value in (("setgroups", "deny"), ("uid_map", f"{uid} 0 1"),
                        ("gid_map", f"{gid} 0 1")):
        with open(f"/proc/self/{name}", "w") as out:
            out.write(value)
    run([spec["shell"], "-c", command], lists, after_class, own_pids=True)


def scope_sockets() -> None:
    """Abstract unix sockets (an X server's, a bus's) out of reach but the box's own."""
    syscall = _libc.syscall
    if syscall(444, None, 0, 1) < 6:  # (landlock_create_ruleset: the ABI's version)
        return
    attr = (ctypes.c_uint64 * 3)(0, 0, 1)  # (no file or net rule; scoped: abstract)
    ruleset = syscall(444, ctypes.byref(attr), ctypes.sizeof(attr), 0)
    if ruleset < 0 or _libc.prctl(38, 1, 0, 0, 0) != 0 or syscall(446, ruleset, 0) != 0:
        fail(f"cannot scope its sockets ({os.strerror(ctypes.get_errno())})")
    os.close(ruleset)


def loopback_up() -> None:
    """The namespace's own loopback, up (it starts down): tests may serve on 127.0.0.1.
    By ``ioctl(2)`` through libc (``socket``'s import would cost every such call ~3 ms)."""
    request = ctypes.create_string_buffer(b"lo", 40)  # (struct ifreq: name, then flags)
    fd = _libc.socket(2, 2, 0)  # (AF_INET, SOCK_DGRAM)
    if fd < 0 or _libc.ioctl(fd, 0x8913, request) != 0:  # (SIOCGIFFLAGS)
        fail(f"cannot bring the box's loopback up ({os.strerror(ctypes.get_errno())})")
    request[16] = bytes([request.raw[16] | 1])  # (IFF_UP, in the flags' low byte)
    if _libc.ioctl(fd, 0x8914, request) != 0:  # (SIOCSIFFLAGS)
        fail(f"cannot bring the box's loopback up ({os.strerror(ctypes.get_errno())})")
    os.close(fd)


def private_tmp(own: str, lists: dict[str, list[str]]) -> list[str]:
    """``/tmp`` as the step's own folder (``own``): no other program's files or sockets;
    what the box needs under the shared ``/tmp`` (the project, caches, maker's own, the
    home folder: ``keep``) seen through it; a ``TMPDIR`` under it made anew there. What
    of it the box is to make read-only (not ``rw``)."""
    needed = sorted({p for kind in ("rw", "ro", "gitdir", "laterdir", "keep")
                     for p in lists[kind] if inside(p, ["/tmp"]) and p != "/tmp"}, key=len)
    tops: list[str] = []
    for path in needed:
        if not inside(path, tops) and os.path.lexists(path):
            tops.append(path)
    held = [(path, os.open(path, os.O_PATH | os.O_CLOEXEC)) for path in tops]
    mount(own, "/tmp", None, MS_BIND | MS_REC)
    for path, fd in held:
        source = f"/proc/self/fd/{fd}"
        if os.path.isdir(source):
            os.makedirs(path, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            open(path, "a").close()
        mount(source, path, None, MS_BIND | MS_REC)
        os.close(fd)
    for path in lists["temp"]:
        if inside(path, ["/tmp"]):
            os.makedirs(path, exist_ok=True)
    return [path for path, _ in held if not inside(path, lists["rw"])]


def seatbelt(lists: dict[str, list[str]], net: str = "") -> str:
    """The box as a Seatbelt profile (macOS's ``sandbox-exec``). The last rule that
    matches wins: nothing writable but ``/dev``, then the writable places, then not what
    the step must never write; what is hidden can be neither read, written nor connected
    to. Paths resolved, as Seatbelt matches them (``/tmp`` is ``/private/tmp``)."""
    def places(kind: str, form: str = "(subpath {})") -> str:
        return " ".join(form.format(_sbpl(p)) for p in real[kind])

    real = {kind: [os.path.realpath(p) for p in paths] for kind, paths in lists.items()}
    real["rw"] += real.get("temp", [])
    # (a rule names a path: a folder above a read-only place, renamed away and back,
    # would carry it out of its rule; so no such folder in a writable place may change)
    real["above"] = sorted({folder for p in real["ro"] + real["hide"]
                            for folder in _folders_above(p) if inside(folder, real["rw"])})
    rules = ["(version 1)", "(allow default)", "(deny file-write*)",
             '(allow file-write* (subpath "/dev"))']
    if real["rw"]:
        rules.append(f"(allow file-write* {places('rw')})")
    if real["ro"] or real["above"]:
        denied = [places("ro"), places("above", "(literal {})")]
        rules.append(f"(deny file-write* {' '.join(d for d in denied if d)})")
    if lists["hide"]:
        rules.append(f"(deny file-read* file-write* {places('hide')})")
        rules.append("(deny network-outbound "
                     f"{places('hide', '(remote unix-socket (subpath {}))')})")
    if net == "none":  # (loopback only, as the namespace on Linux)
        rules += ['(deny network-outbound (remote ip "*:*"))',
                  '(allow network-outbound (remote ip "localhost:*"))']
    return "\n".join(rules) + "\n"


def _folders_above(path: str) -> list[str]:
    folders = []
    while (path := os.path.dirname(path)) not in ("/", ""):
        folders.append(path)
    return folders


def _sbpl(text: str) -> str:
    """A string literal of the profile language."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def run(argv: list[str], lists: dict[str, list[str]], after_class: Any, *,
        own_pids: bool) -> NoReturn:
    """Run the command (``argv``) in the step's directory, its stdin ``/dev/null``, and
    stay as its supervisor (:func:`supervise`)."""
    try:
        os.chdir(os.environ.pop("MAKER_BOX_CWD", "") or "/")
    except OSError:
        os.chdir("/")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    after = after_class(lists)  # (what was there before it ran)
    if after.refusal():
        fail(after.refusal())
    # (the box's first process: a command of the same user may signal it, and Python
    # handles SIGINT; ignored, none of them stops the clean-up below)
    caught = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1,
              signal.SIGUSR2, signal.SIGPIPE, signal.SIGALRM)
    for number in caught:
        signal.signal(number, signal.SIG_IGN)
    if own_pids:  # (unshare gone, a SIGHUP's or a SIGKILL's: all ends, then the undo)
        signal.signal(signal.SIGTERM, _end_all)
    child = os.fork()
    if child == 0:
        for number in caught:
            signal.signal(number, signal.SIG_DFL)
        if not own_pids:
            os.setpgid(0, 0)  # (its group is what the supervisor ends)
        os.environ["PYTHONDONTWRITEBYTECODE"] = "1"  # (a .pyc it leaves in the project goes)
        if sys.platform.startswith("linux"):
            scope_sockets()
        try:
            os.execv(argv[0], argv)
        except OSError as exc:
            fail(f"cannot run {argv[0]} ({exc})")
    code = supervise(child, after, own_pids=own_pids)
    if code and lists["note"]:  # (what the box held, where it may be why it failed)
        sys.stderr.write(f"maker-box: {lists['note'][0]}\n")
    sys.exit(code)


def _after() -> Any:
    """``box_after.py``'s ``After`` (``box_sites.py`` and ``box_walk.py`` read in first),
    from beside this file: each one's ``.pyc``, else its source."""
    code: dict[str, Any] = {}
    for name in ("box_sites.py", "box_walk.py", "box_after.py"):
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), name)
        try:
            with open(path + "c", "rb") as compiled:  # (-I: no import from beside it)
                exec(marshal.loads(compiled.read()[16:]), code)
        except OSError:
            with open(path) as text:
                exec(compile(text.read(), path, "exec"), code)
    return code["After"]


def _end_all(who: object = -1, *_: object) -> None:  # (-1: all of its PID namespace)
    try:
        os.kill(who if isinstance(who, int) and who < 0 else -1, 9)
    except OSError:  # (none left)
        pass


def supervise(child: int, after: Any, *, own_pids: bool) -> int:
    """As the box's first process: wait for the command, end whatever it left running
    (nothing acts once the box is gone: in the box's own PID namespace, every other
    process; on macOS, which has none, the command's process group), then undo what
    would run code later outside the box (a ``commondir``, ``later``). The command's
    exit status."""
    status = 0
    try:
        while True:
            try:
                _, status = os.waitpid(child, 0)
                break
            except InterruptedError:
                continue
    finally:
        _end_all(-child if not own_pids else -1)
        while True:
            try:
                os.waitpid(-1, 0)
            except (ChildProcessError, InterruptedError):
                break
        for said in after.undo():
            sys.stderr.write(f"maker-box: {said}\n")
    return os.waitstatus_to_exitcode(status) % 256


if __name__ == "__main__":
    main()
