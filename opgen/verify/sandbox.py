"""The sandbox a candidate kernel runs in: limits, network namespace, Landlock,
capabilities, seccomp filter, and what a signal death means.

The candidate runs only in the executor (``opgen.verify.executor``), a process forked
by the trusted runner. Every layer is recorded in the verification evidence, so nobody
has to guess which one was in force:

* **Resource limits** (CPU, address space, file size, open files, processes, no core
  dumps) and a session of its own, applied by the parent before ``exec``
  (``opgen.verify.harness``) and inherited by the executor.
* **A network namespace** of its own (``unshare(CLONE_NEWNET)`` before ``exec``) where
  the platform allows it (root, or unprivileged user namespaces): only a loopback
  device that is down. Where that is refused, the seccomp filter still kills any
  process that creates a socket.
* **Landlock** (Linux 5.13+): the executor may create, write, truncate or remove
  files only inside its own directory (and write /dev/null); from ABI 4 no TCP
  bind/connect, from ABI 6 no signals to processes outside its sandbox. Reads stay
  open.
* **No capabilities**: root without CAP_SYS_PTRACE cannot read or write the memory of
  the (non-dumpable) runner, even where Landlock is missing.
* **A seccomp filter**, installed *before* the executor ``dlopen``s the candidate, so
  static initializers already run inside it. A forbidden system call (process
  creation, networking, opening a file for writing, changing its limits, signalling or
  inspecting other processes, ...) kills the process with SIGSYS
  (``SECCOMP_RET_KILL_PROCESS``): a call that merely failed would let a kernel that
  tries to escape, and then quietly computes the right answer, be admitted. The runner
  turns the SIGSYS into a rejection naming the input that triggered it (and, from the
  kernel's audit log where readable, the system call).

The filter is a classic BPF program written out here by hand (no libseccomp). It is
x86-64 only; on other machines the executor records that it ran without one.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import platform
import signal
import struct
from pathlib import Path
from typing import Any

# --- system call numbers (x86-64) -------------------------------------------------

AUDIT_ARCH_X86_64 = 0xC000003E
X32_SYSCALL_BIT = 0x40000000
CLONE_THREAD = 0x00010000
CLONE_NEWNET = 0x40000000

NR = {
    # process creation (clone is allowed with CLONE_THREAD only; clone3 answers ENOSYS)
    "fork": 57, "vfork": 58, "execve": 59, "execveat": 322, "clone": 56, "clone3": 435,
    # networking
    "socket": 41, "connect": 42, "accept": 43, "sendto": 44, "recvfrom": 45, "sendmsg": 46, "recvmsg": 47,
    "shutdown": 48, "bind": 49, "listen": 50, "getsockname": 51, "getpeername": 52, "socketpair": 53,
    "setsockopt": 54, "getsockopt": 55, "accept4": 288, "recvmmsg": 299, "sendmmsg": 307,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,  # io_uring can open sockets too
    # other processes
    "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "kcmp": 312, "pidfd_open": 434,
    "pidfd_getfd": 438, "pidfd_send_signal": 424, "process_madvise": 440, "process_mrelease": 448,
    "tkill": 200, "migrate_pages": 256,
    "kill": 62, "tgkill": 234, "rt_sigqueueinfo": 129, "rt_tgsigqueueinfo": 297,
    # its own limits: reading them (prlimit64 without a new limit) is fine, changing them is not
    "prlimit64": 302, "setrlimit": 160,
    # leaving the process group the parent kills on a timeout
    "setsid": 112, "setpgid": 109,
    # privileges and namespaces
    "setuid": 105, "setgid": 106, "setreuid": 113, "setregid": 114, "setgroups": 116, "setresuid": 117,
    "setresgid": 119, "setfsuid": 122, "setfsgid": 123, "capset": 126, "unshare": 272, "setns": 308,
    "personality": 135,
    # file systems
    "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161, "open_tree": 428, "move_mount": 429,
    "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442, "swapon": 167,
    "swapoff": 168, "acct": 163, "quotactl": 179, "quotactl_fd": 443, "name_to_handle_at": 303,
    "open_by_handle_at": 304, "mknod": 133, "mknodat": 259,
    # writing files (open/openat for writing are inspected: reading stays allowed)
    "open": 2, "openat": 257, "creat": 85, "openat2": 437, "rename": 82, "renameat": 264, "renameat2": 316,
    "unlink": 87, "unlinkat": 263, "mkdir": 83, "mkdirat": 258, "rmdir": 84, "link": 86, "linkat": 265,
    "symlink": 88, "symlinkat": 266, "truncate": 76,
    # file ownership, modes, times and extended attributes (Landlock does not cover these)
    "chmod": 90, "fchmod": 91, "fchmodat": 268, "fchmodat2": 452, "chown": 92, "fchown": 93, "lchown": 94,
    "fchownat": 260, "utime": 132, "utimes": 235, "futimesat": 261, "utimensat": 280, "setxattr": 188,
    "lsetxattr": 189, "fsetxattr": 190, "removexattr": 197, "lremovexattr": 198, "fremovexattr": 199,
    # the machine
    "reboot": 169, "kexec_load": 246, "kexec_file_load": 320, "init_module": 175, "finit_module": 313,
    "delete_module": 176, "bpf": 321, "perf_event_open": 298, "keyctl": 250, "add_key": 248,
    "request_key": 249, "syslog": 103, "iopl": 172, "ioperm": 173, "settimeofday": 164, "clock_settime": 227,
    "clock_adjtime": 305, "adjtimex": 159, "sethostname": 170, "setdomainname": 171, "userfaultfd": 323,
    "fanotify_init": 300, "lookup_dcookie": 212, "vhangup": 153, "uselib": 134,
}

# What each denied call is, in words (for the rejection and the evidence).
DENIED: dict[str, tuple[str, ...]] = {
    "process creation": ("fork", "vfork", "execve", "execveat", "clone without CLONE_THREAD"),
    "networking": ("socket", "socketpair", "connect", "bind", "listen", "accept", "accept4", "sendto", "sendmsg",
                   "sendmmsg", "recvfrom", "recvmsg", "recvmmsg", "shutdown", "getsockname", "getpeername",
                   "setsockopt", "getsockopt", "io_uring_setup", "io_uring_enter", "io_uring_register"),
    "other processes": ("ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_open", "pidfd_getfd",
                        "pidfd_send_signal", "process_madvise", "process_mrelease", "tkill", "migrate_pages",
                        "kill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo aimed at another process",
                        "prlimit64 on another process"),
    "changing its limits": ("setrlimit", "prlimit64 with a new limit"),
    "leaving its process group": ("setsid", "setpgid"),
    "privileges and namespaces": ("setuid", "setgid", "setreuid", "setregid", "setgroups", "setresuid",
                                  "setresgid", "setfsuid", "setfsgid", "capset", "unshare", "setns", "personality"),
    "file systems": ("mount", "umount2", "pivot_root", "chroot", "open_tree", "move_mount", "fsopen", "fsconfig",
                     "fsmount", "fspick", "mount_setattr", "swapon", "swapoff", "acct", "quotactl", "quotactl_fd",
                     "name_to_handle_at", "open_by_handle_at", "mknod", "mknodat"),
    "writing files": ("open and openat for writing (O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_APPEND)", "creat",
                      "openat2", "rename", "renameat", "renameat2", "unlink", "unlinkat", "mkdir", "mkdirat",
                      "rmdir", "link", "linkat", "symlink", "symlinkat", "truncate"),
    "file ownership, modes, times and attributes": (
        "chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown", "fchownat", "utime", "utimes",
        "futimesat", "utimensat", "setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr",
        "fremovexattr"),
    "the machine": ("reboot", "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
                    "bpf", "perf_event_open", "keyctl", "add_key", "request_key", "syslog", "iopl", "ioperm",
                    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "sethostname", "setdomainname",
                    "userfaultfd", "fanotify_init", "lookup_dcookie", "vhangup", "uselib"),
}
KILLED = tuple(n for names in DENIED.values() for n in names if n in NR and n != "prlimit64")  # unconditional
# (open, openat and prlimit64 are inspected; kill/tgkill/... go to the "only itself" check)
ONLY_SELF_ARG0 = ("kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo")  # signals: only to itself

# --- classic BPF --------------------------------------------------------------------

BPF_LD_W_ABS = 0x20
BPF_JEQ_K = 0x15
BPF_JGE_K = 0x35
BPF_JSET_K = 0x45
BPF_RET_K = 0x06

SECCOMP_RET_KILL_PROCESS = 0x80000000
SECCOMP_RET_ERRNO = 0x00050000
SECCOMP_RET_ALLOW = 0x7FFF0000

# struct seccomp_data { int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]; }
OFF_NR, OFF_ARCH, OFF_ARG0_LO = 0, 4, 16
OFF_ARG1_LO, OFF_ARG2_LO, OFF_ARG2_HI = 24, 32, 36
O_WRITE_FLAGS = 0o1 | 0o2 | 0o100 | 0o1000 | 0o2000  # O_WRONLY O_RDWR O_CREAT O_TRUNC O_APPEND

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
SECCOMP_SET_MODE_FILTER = 1
SECCOMP_FILTER_FLAG_TSYNC = 1
NR_SECCOMP = 317


class _Assembler:
    """A few BPF instructions with forward jumps to named labels."""

    def __init__(self) -> None:
        self.code: list[tuple[int, Any, Any, int]] = []
        self.labels: dict[str, int] = {}

    def load(self, offset: int) -> None:
        self.code.append((BPF_LD_W_ABS, 0, 0, offset))

    def jump(self, op: int, k: int, jt: str | None, jf: str | None) -> None:
        self.code.append((op, jt, jf, k))

    def ret(self, value: int) -> None:
        self.code.append((BPF_RET_K, 0, 0, value))

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def assemble(self) -> bytes:
        out = b""
        for i, (op, jt, jf, k) in enumerate(self.code):
            offsets = []
            for target in (jt, jf):
                if target is None or isinstance(target, int):
                    offsets.append(target or 0)
                    continue
                delta = self.labels[target] - i - 1
                if not 0 <= delta <= 255:
                    raise ValueError(f"BPF jump to {target} out of range ({delta})")
                offsets.append(delta)
            out += struct.pack("=HBBI", op, offsets[0], offsets[1], k)
        return out


def filter_program(pid: int) -> bytes:
    """The filter as ``struct sock_filter[]`` bytes; ``pid`` is the process allowed to signal itself."""
    a = _Assembler()
    a.load(OFF_ARCH)
    a.jump(BPF_JEQ_K, AUDIT_ARCH_X86_64, None, "kill")  # i386 or x32 entry points: no
    a.load(OFF_NR)
    a.jump(BPF_JGE_K, X32_SYSCALL_BIT, "kill", None)
    a.jump(BPF_JEQ_K, NR["clone3"], "enosys", None)  # glibc then falls back to clone(), inspected below
    a.jump(BPF_JEQ_K, NR["clone"], "clone", None)
    a.jump(BPF_JEQ_K, NR["prlimit64"], "prlimit", None)
    a.jump(BPF_JEQ_K, NR["open"], "open", None)
    a.jump(BPF_JEQ_K, NR["openat"], "openat", None)
    for name in ONLY_SELF_ARG0:
        a.jump(BPF_JEQ_K, NR[name], "self", None)
    for name in KILLED:
        a.jump(BPF_JEQ_K, NR[name], "kill", None)
    a.ret(SECCOMP_RET_ALLOW)
    a.label("clone")  # a thread (CLONE_THREAD) is fine; a new process is not
    a.load(OFF_ARG0_LO)
    a.jump(BPF_JSET_K, CLONE_THREAD, "allow", "kill")
    a.label("open")  # open(path, flags): reading only
    a.load(OFF_ARG1_LO)
    a.jump(BPF_JSET_K, O_WRITE_FLAGS, "kill", "allow")
    a.label("openat")  # openat(dirfd, path, flags): reading only
    a.load(OFF_ARG2_LO)
    a.jump(BPF_JSET_K, O_WRITE_FLAGS, "kill", "allow")
    a.label("prlimit")  # reading its own limits (pid 0 or its own pid; no new limit) only
    a.load(OFF_ARG0_LO)
    a.jump(BPF_JEQ_K, 0, "prlimit_read", None)
    a.jump(BPF_JEQ_K, pid, "prlimit_read", "kill")
    a.label("prlimit_read")
    a.load(OFF_ARG2_LO)
    a.jump(BPF_JEQ_K, 0, None, "kill")
    a.load(OFF_ARG2_HI)
    a.jump(BPF_JEQ_K, 0, "allow", "kill")
    a.label("self")  # signals to itself (raise, abort) only
    a.load(OFF_ARG0_LO)
    a.jump(BPF_JEQ_K, pid, "allow", "kill")
    a.label("enosys")
    a.ret(SECCOMP_RET_ERRNO | errno.ENOSYS)
    a.label("allow")
    a.ret(SECCOMP_RET_ALLOW)
    a.label("kill")
    a.ret(SECCOMP_RET_KILL_PROCESS)
    return a.assemble()


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter))]


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def install_seccomp() -> dict[str, Any]:
    """Install the filter on every thread of this process; say what happened (never raises)."""
    if platform.system() != "Linux" or platform.machine() != "x86_64":
        return {"installed": False, "note": f"no seccomp filter: written for Linux x86-64, this is "
                                            f"{platform.system()} {platform.machine()}"}
    program = filter_program(os.getpid())
    count = len(program) // 8
    buf = (_SockFilter * count).from_buffer_copy(program)
    prog = _SockFprog(count, ctypes.cast(buf, ctypes.POINTER(_SockFilter)))
    libc = _libc()
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return {"installed": False, "note": f"prctl(PR_SET_NO_NEW_PRIVS) failed: {os.strerror(ctypes.get_errno())}"}
    # seccomp(2) with TSYNC covers threads that already exist (numpy's BLAS pool, torch's);
    # prctl(PR_SET_SECCOMP) would cover this thread and its future children only.
    libc.syscall.restype = ctypes.c_long
    rc = libc.syscall(ctypes.c_long(NR_SECCOMP), ctypes.c_ulong(SECCOMP_SET_MODE_FILTER),
                      ctypes.c_ulong(SECCOMP_FILTER_FLAG_TSYNC), ctypes.byref(prog))
    how = "seccomp(SECCOMP_SET_MODE_FILTER, TSYNC)"
    if rc != 0:
        first = os.strerror(ctypes.get_errno()) if rc < 0 else f"thread {rc} could not be synchronised"
        if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(prog), 0, 0) != 0:
            return {"installed": False, "note": f"seccomp refused ({first}; prctl: {os.strerror(ctypes.get_errno())})"}
        how = f"prctl(PR_SET_SECCOMP) on the main thread only (TSYNC failed: {first})"
    return {"installed": True, "action": "SECCOMP_RET_KILL_PROCESS", "arch": "x86_64", "how": how,
            "instructions": count, "denied": {k: list(v) for k, v in DENIED.items()},
            "allowed_with_conditions": ["clone with CLONE_THREAD (threads)", "clone3 answers ENOSYS (glibc falls back)",
                                        "open/openat for reading",
                                        "kill/tgkill/rt_sigqueueinfo/rt_tgsigqueueinfo on itself",
                                        "prlimit64 reading its own limits"]}


# --- Landlock: writes only inside the working directory ------------------------------

NR_LANDLOCK_CREATE_RULESET, NR_LANDLOCK_ADD_RULE, NR_LANDLOCK_RESTRICT_SELF = 444, 445, 446
LANDLOCK_CREATE_RULESET_VERSION = 1
LANDLOCK_RULE_PATH_BENEATH = 1
FS_WRITE_FILE, FS_TRUNCATE, FS_IOCTL_DEV, FS_REFER = 1 << 1, 1 << 14, 1 << 15, 1 << 13
# remove dir/file, make char/dir/reg/sock/fifo/block/sym
FS_CHANGE_TREE = sum(1 << b for b in (4, 5, 6, 7, 8, 9, 10, 11, 12))
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def landlock_abi() -> int:
    """The Landlock ABI version this kernel offers, 0 where there is none."""
    if platform.system() != "Linux" or platform.machine() != "x86_64":
        return 0
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    abi = libc.syscall(ctypes.c_long(NR_LANDLOCK_CREATE_RULESET), None, ctypes.c_size_t(0),
                       ctypes.c_uint32(LANDLOCK_CREATE_RULESET_VERSION))
    return max(int(abi), 0)


def install_landlock(work: Path) -> dict[str, Any]:
    """Restrict file writes to ``work`` (and /dev/null); say what happened (never raises)."""
    abi = landlock_abi()
    if abi < 1:
        return {"installed": False, "note": "Landlock is not available (x86-64 Linux 5.13+ with Landlock enabled)"}
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    fs = FS_WRITE_FILE | FS_CHANGE_TREE | (FS_REFER if abi >= 2 else 0) | (FS_TRUNCATE if abi >= 3 else 0) \
        | (FS_IOCTL_DEV if abi >= 5 else 0)
    net = NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0
    scoped = SCOPE_SIGNAL | SCOPE_ABSTRACT_UNIX_SOCKET if abi >= 6 else 0
    attr = _RulesetAttr(fs, net, scoped)
    size = 8 if abi < 4 else 16 if abi < 6 else 24
    ruleset = libc.syscall(ctypes.c_long(NR_LANDLOCK_CREATE_RULESET), ctypes.byref(attr), ctypes.c_size_t(size),
                           ctypes.c_uint32(0))
    if ruleset < 0:
        return {"installed": False, "note": f"landlock_create_ruleset failed: {os.strerror(ctypes.get_errno())}"}
    try:
        file_rights = FS_WRITE_FILE | (FS_TRUNCATE if abi >= 3 else 0)
        for path, rights in ((work, fs), (Path("/dev/null"), file_rights)):
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            try:
                rule = _PathBeneath(rights, fd)
                if libc.syscall(ctypes.c_long(NR_LANDLOCK_ADD_RULE), ctypes.c_int(ruleset),
                                ctypes.c_int(LANDLOCK_RULE_PATH_BENEATH), ctypes.byref(rule), ctypes.c_uint32(0)) != 0:
                    return {"installed": False, "note": f"landlock_add_rule({path}) failed: "
                                                        f"{os.strerror(ctypes.get_errno())}"}
            finally:
                os.close(fd)
        libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
        libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        if libc.syscall(ctypes.c_long(NR_LANDLOCK_RESTRICT_SELF), ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            return {"installed": False, "note": f"landlock_restrict_self failed: {os.strerror(ctypes.get_errno())}"}
    finally:
        os.close(ruleset)
    return {"installed": True, "abi": int(abi), "writable": ["the private working directory", "/dev/null"],
            "tcp": "denied" if net else "not handled (ABI < 4)",
            "signals_outside": "denied" if scoped else "not handled (ABI < 6)"}


# --- capabilities ----------------------------------------------------------------------

PR_CAPBSET_DROP, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, PR_SET_DUMPABLE = 24, 47, 4, 8
_LINUX_CAPABILITY_VERSION_3 = 0x20080522


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def drop_capabilities() -> dict[str, Any]:
    """Give up every capability (bounding, ambient, effective, permitted, inheritable).

    Root without capabilities still owns root's files, but can no longer ptrace or read the
    memory of a non-dumpable process (the runner), bypass file permissions of other users,
    or use any privileged operation the seccomp filter might have missed."""
    libc = _libc()
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    for cap in range(64):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() == errno.EINVAL:
            break  # past the last capability this kernel knows
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header, data = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0), (_CapData * 2)()
    libc.syscall.restype = ctypes.c_long
    if libc.syscall(ctypes.c_long(NR["capset"]), ctypes.byref(header), data) != 0:
        return {"dropped": False, "note": f"capset failed: {os.strerror(ctypes.get_errno())}"}
    return {"dropped": True}


def make_undumpable() -> None:
    """The runner: its memory is not readable through /proc/<pid>/mem by a process without
    CAP_SYS_PTRACE (the executor, which has dropped it)."""
    libc = _libc()
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


# --- network namespace (called in the parent's preexec_fn, between fork and exec) ----

_unshare = None
try:
    _unshare = _libc().unshare  # resolved now, so the forked child only makes the call
    _unshare.argtypes = [ctypes.c_int]
except (OSError, AttributeError):
    pass


def enter_network_namespace() -> bool:
    """unshare(CLONE_NEWNET): a namespace with only a downed loopback. False where refused."""
    try:
        return _unshare is not None and _unshare(CLONE_NEWNET) == 0
    except Exception:  # noqa: BLE001 - must never raise between fork and exec
        return False


def network_namespace() -> str | None:
    try:
        return os.readlink("/proc/self/ns/net")
    except OSError:
        return None


def network_state(parent_netns: str | None, seccomp: dict[str, Any]) -> str:
    """Which network block is in force in this (child) process."""
    mine = network_namespace()
    if mine is not None and parent_netns is not None and mine != parent_netns:
        return "namespace" + (" + seccomp socket block" if seccomp.get("installed") else "")
    if seccomp.get("installed"):
        return "seccomp socket block (no network namespace: unshare(CLONE_NEWNET) was refused)"
    return "none (no network namespace and no seccomp filter on this platform)"


def enter(work: Path, parent_netns: str | None) -> dict[str, Any]:
    """The executor, once, before the candidate is loaded: Landlock, capabilities, seccomp."""
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # Python ignores it; a flood must end the process
    landlock = install_landlock(work)
    capabilities = drop_capabilities()
    seccomp = install_seccomp()
    return {"seccomp": seccomp, "landlock": landlock, "capabilities": capabilities,
            "network": network_state(parent_netns, seccomp)}


# --- what a signal death means -------------------------------------------------------

SIGNAL_MEANING = {
    "SIGSEGV": "invalid memory access (segmentation fault: an out-of-bounds or null pointer access)",
    "SIGBUS": "bus error (a misaligned access or memory that is mapped but not backed)",
    "SIGABRT": "it aborted (abort(), a failed assertion, std::terminate or an uncaught C++ exception)",
    "SIGFPE": "arithmetic exception (integer division by zero or INT_MIN / -1)",
    "SIGILL": "illegal instruction (an instruction this CPU lacks, or __builtin_trap)",
    "SIGSYS": "forbidden system call: the sandbox kills a process that creates processes, uses the network, "
              "signals or inspects other processes, changes file modes or owners, or changes privileges, "
              "namespaces or mounts",
    "SIGKILL": "it was killed (a resource limit, or the machine ran out of memory)",
    "SIGXCPU": "it used more CPU time than the limit allows",
    "SIGXFSZ": "it wrote past the file-size limit (output flooding)",
    "SIGTRAP": "a trap instruction (a breakpoint or __builtin_debugtrap)",
    "SIGPIPE": "it wrote to a closed pipe",
}
