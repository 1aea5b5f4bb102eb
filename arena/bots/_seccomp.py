"""The system call filter of the ``strict`` sandbox: a classic BPF program for seccomp,
written here (the arena's Python has no libseccomp binding) and handed to bwrap
(``--seccomp FD``), which installs it in the sandbox just before it execs the bot's first
program; every process the bot starts inherits it, and none can lift it.

It is a deny list: bots are arbitrary programs in any language (CPython, Node's V8, a
JVM, Go's runtime, a C binary), so the filter refuses only system calls that no game
player needs and that reach kernel state shared with other sandboxes and the host, or
widen the kernel's attack surface (each is explained in :data:`REFUSED` and in
docs/sandbox.md). What it does:

1. A system call made through an ABI the table does not describe (on x86_64: the i386
   ABI, ``int 0x80``, and the x32 ABI, numbers with bit 30 set; on aarch64: 32-bit ARM)
   kills the process (SIGSYS): its numbers mean other calls, and no bot needs it.
2. A refused call fails with ``EPERM`` (or ``ENOSYS`` where programs then fall back
   cleanly: ``clone3``, whose flags are in memory that seccomp cannot read, so that libc
   falls back to ``clone``; ``io_uring_setup``, which libuv and others fall back from;
   inotify and fanotify), ``ENOLCK`` for file locks (what a filesystem without locks
   answers), ``EAFNOSUPPORT`` for a socket family outside the allow list.
3. Some calls are refused only for some values of a register argument: ``clone`` and
   ``unshare`` only when asked for a new namespace (threads, ``fork`` and ``vfork`` are
   unaffected); ``personality`` is allowed only for the harmless personas (no
   ``ADDR_NO_RANDOMIZE``); ``fcntl`` only for its lock, lease and directory-notification
   commands (``F_GETFL``, ``F_SETFD``, ``F_DUPFD``... work); ``socket`` and ``socketpair``
   only for a family other than AF_UNIX, AF_INET, AF_INET6 and AF_NETLINK, which the
   sandbox's network namespace covers.
4. Everything else is allowed.

A build step gets the same filter but for the file locks (:attr:`Refusal.game_only`):
cargo, go and others lock their caches, and a build's processes have all ended before
any game of its bot starts, so no lock of theirs reaches a game.

:func:`program` builds the program for the machine the arena runs on, and raises
:class:`UnsupportedMachine` on one whose system call numbers the table does not know
(then ``strict`` is not available, with that message: a filter with wrong numbers would
refuse the wrong calls). :func:`filter_fd` hands it over as the read end of a pipe.
"""

from __future__ import annotations

import errno
import fcntl
import os
import struct
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

__all__ = [
    "ARCHES",
    "REFUSED",
    "UnsupportedMachine",
    "assemble",
    "filter_fd",
    "host_arch",
    "program",
    "program_for",
]


class UnsupportedMachine(Exception):
    """The arena runs on a machine whose system call numbers the filter does not know."""


# -- classic BPF, as seccomp reads it ---------------------------------------------------------

# struct sock_filter { __u16 code; __u8 jt; __u8 jf; __u32 k; }: native byte order.
_INSN = struct.Struct("=HBBI")

_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS: A = the 32-bit word of seccomp_data at k
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K: A == k
_JSET_K = 0x45  # BPF_JMP | BPF_JSET | BPF_K: A & k
_RET_K = 0x06  # BPF_RET | BPF_K: return k

# struct seccomp_data { int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]; }
_NR = 0
_ARCH = 4


def _arg_low(i: int) -> int:
    """Offset of the low 32 bits of argument ``i`` (both arches here are little-endian)."""
    return 16 + 8 * i


RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
RET_ALLOW = 0x7FFF0000

# The namespace flags of clone(2) and unshare(2); CLONE_NEWTIME (0x80) is unshare's only:
# in clone's low byte it is the exit signal.
CLONE_NEWNS = 0x00020000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
CLONE_NEWTIME = 0x00000080
_CLONE_NAMESPACES = (
    CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET
)
_UNSHARE_NAMESPACES = _CLONE_NAMESPACES | CLONE_NEWTIME

# personality(2) values a program may set or query: PER_LINUX, PER_LINUX32, UNAME26 with
# either, and 0xffffffff (query only). Refused: ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC and
# the other flags that weaken the process's own protections.
PERSONALITIES_ALLOWED = (0x0, 0x8, 0x20000, 0x20008, 0xFFFFFFFF)

_X32_SYSCALL_BIT = 0x40000000

# fcntl(2) commands (asm-generic/fcntl.h, linux/fcntl.h: alike on x86_64 and aarch64; the
# 64-bit kernel has no F_GETLK64 & co., they are 32-bit ABIs').
F_GETLK, F_SETLK, F_SETLKW = 5, 6, 7
F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW = 36, 37, 38
F_SETLEASE, F_GETLEASE, F_NOTIFY = 1024, 1025, 1026

# The socket families a bot may open: the network namespace bwrap gives the sandbox
# covers them (AF_NETLINK: glibc's getaddrinfo asks the routing table through it).
AF_UNIX, AF_INET, AF_INET6, AF_NETLINK = 1, 2, 10, 16
FAMILIES_ALLOWED = (AF_UNIX, AF_INET, AF_INET6, AF_NETLINK)


# -- what is refused, and why ----------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Refusal:
    names: tuple[str, ...]
    why: str
    errno: int = errno.EPERM
    # Refused only for some values of a register argument: "namespaces" (clone, unshare:
    # a namespace flag in arg 0), "personas" (personality: arg 0 not in PERSONALITIES_ALLOWED),
    # "commands" (fcntl: arg 1 in ``values``), "families" (socket: arg 0 not in ``values``).
    only: str = ""
    values: tuple[int, ...] = ()
    game_only: bool = False  # a build step may make the call (see the module's docstring)


#: The refused system calls, grouped by why (docs/sandbox.md has the same table).
REFUSED: tuple[Refusal, ...] = (
    Refusal(("add_key", "request_key", "keyctl"),
            "the kernel's key rings are shared by every process of a user namespace: a key "
            "readable by others is listed in /proc/keys and readable from any sandbox, and outlives "
            "the bot (a channel between bots in a game, and a memory across games and runs)"),
    Refusal(("ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "process_madvise", "kcmp"),
            "they read, write or steer another process (on old kernels a tracer could also rewrite a "
            "system call after the filter saw it); a bot needs none to play"),
    Refusal(("perf_event_open", "bpf", "userfaultfd"),
            "large kernel attack surface (the usual first step of kernel exploits) and, for perf, "
            "hardware counters that measure other processes"),
    Refusal(("kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
             "reboot", "swapon", "swapoff", "acct", "quotactl", "quotactl_fd", "syslog", "lookup_dcookie"),
            "they act on the whole machine (its kernel, modules, swap, accounting, quotas, kernel log); "
            "the bot has no capability for most, and none has a use in a game"),
    Refusal(("mount", "umount2", "pivot_root", "move_mount", "open_tree", "open_tree_attr", "fsopen",
             "fsconfig", "fsmount", "fspick", "mount_setattr", "open_by_handle_at"),
            "they rearrange or reach past the file view the sandbox built (open_by_handle_at opens "
            "files by handle, outside any mount)"),
    Refusal(("setns",), "it joins another namespace"),
    Refusal(("unshare", "clone"),
            "a new namespace (a user namespace above all) opens kernel code that is otherwise "
            "root's only; refused only with a namespace flag, so threads, fork and vfork work",
            only="namespaces"),
    Refusal(("clone3",),
            "its flags are in memory, which seccomp cannot read, so it cannot be checked for a "
            "namespace flag: ENOSYS makes libc fall back to clone, which is checked",
            errno=errno.ENOSYS),
    Refusal(("io_uring_setup", "io_uring_enter", "io_uring_register"),
            "a large, often-exploited kernel interface whose operations are not seen by the filter "
            "at all; libuv (Node) and others fall back to ordinary calls on ENOSYS",
            errno=errno.ENOSYS),
    Refusal(("personality",),
            "turning off address-space randomisation or turning on READ_IMPLIES_EXEC weakens the "
            "process for exploits; PER_LINUX, PER_LINUX32, UNAME26 and the query stay allowed",
            only="personas"),
    Refusal(("flock",),
            "a file lock belongs to the file, not to a namespace: two sandboxes that see one file "
            "(its own read-only bot.py, /usr/bin/env) pass bits through its locks, between two bots "
            "of a game or to the twin game of a duplicate set; ENOLCK is what a filesystem without "
            "locks answers",
            errno=errno.ENOLCK, game_only=True),
    Refusal(("fcntl",),
            "the same channel through POSIX and OFD byte-range locks (F_GETLK, F_SETLK, F_SETLKW, "
            "F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW) and leases (F_SETLEASE, F_GETLEASE); every "
            "other command (F_GETFL, F_SETFD, F_DUPFD...) stays allowed",
            errno=errno.ENOLCK, only="commands", game_only=True,
            values=(F_GETLK, F_SETLK, F_SETLKW, F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW, F_SETLEASE, F_GETLEASE)),
    Refusal(("fcntl",),
            "F_NOTIFY (dnotify) reports accesses to a directory's files by any process, other "
            "sandboxes' too: a channel, as inotify; EINVAL, as on a kernel without dnotify",
            errno=errno.EINVAL, only="commands", values=(F_NOTIFY,)),
    Refusal(("inotify_init", "inotify_init1", "inotify_add_watch", "fanotify_init", "fanotify_mark"),
            "a watch on a file every sandbox shows (in /usr) sees the opens and reads other "
            "sandboxes make: a channel between bots, one file per bit; refused in builds too, which "
            "may run beside games (cluster workers)",
            errno=errno.ENOSYS),
    Refusal(("socket", "socketpair"),
            "a family outside the network namespace (AF_VSOCK's ports are the whole virtual "
            "machine's, shared by every sandbox and reachable from the hypervisor; AF_ALG, "
            "AF_PACKET, AF_KEY, AF_TIPC, AF_RDS, AF_BLUETOOTH... are kernel surface no player "
            "needs); AF_UNIX, AF_INET, AF_INET6 and AF_NETLINK stay allowed",
            errno=errno.EAFNOSUPPORT, only="families", values=FAMILIES_ALLOWED),
)


# -- the machines the filter knows -------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Arch:
    name: str
    audit: int  # seccomp_data.arch of the native ABI
    numbers: dict[str, int]  # system call numbers of the names in REFUSED (absent: no such call)
    x32: bool = False  # the x32 ABI shares the audit arch, marked by bit 30 of the number


_X86_64 = Arch("x86_64", 0xC000003E, {
    "add_key": 248, "request_key": 249, "keyctl": 250,
    "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "pidfd_getfd": 438,
    "process_madvise": 440, "kcmp": 312,
    "perf_event_open": 298, "bpf": 321, "userfaultfd": 323,
    "kexec_load": 246, "kexec_file_load": 320, "init_module": 175, "finit_module": 313, "delete_module": 176,
    "reboot": 169, "swapon": 167, "swapoff": 168, "acct": 163, "quotactl": 179, "quotactl_fd": 443,
    "syslog": 103, "lookup_dcookie": 212,
    "mount": 165, "umount2": 166, "pivot_root": 155, "move_mount": 429, "open_tree": 428, "open_tree_attr": 467,
    "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442, "open_by_handle_at": 304,
    "setns": 308, "unshare": 272, "clone": 56, "clone3": 435,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "personality": 135,
    "flock": 73, "fcntl": 72,
    "inotify_init": 253, "inotify_init1": 294, "inotify_add_watch": 254, "fanotify_init": 300, "fanotify_mark": 301,
    "socket": 41, "socketpair": 53,
}, x32=True)

# aarch64 uses the generic table (asm-generic/unistd.h); calls from 403 on are numbered
# alike on every architecture.
_AARCH64 = Arch("aarch64", 0xC00000B7, {
    "add_key": 217, "request_key": 218, "keyctl": 219,
    "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271, "pidfd_getfd": 438,
    "process_madvise": 440, "kcmp": 272,
    "perf_event_open": 241, "bpf": 280, "userfaultfd": 282,
    "kexec_load": 104, "kexec_file_load": 294, "init_module": 105, "finit_module": 273, "delete_module": 106,
    "reboot": 142, "swapon": 224, "swapoff": 225, "acct": 89, "quotactl": 60, "quotactl_fd": 443,
    "syslog": 116, "lookup_dcookie": 18,
    "mount": 40, "umount2": 39, "pivot_root": 41, "move_mount": 429, "open_tree": 428, "open_tree_attr": 467,
    "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442, "open_by_handle_at": 265,
    "setns": 268, "unshare": 97, "clone": 220, "clone3": 435,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "personality": 92,
    "flock": 32, "fcntl": 25,  # no inotify_init: only inotify_init1
    "inotify_init1": 26, "inotify_add_watch": 27, "fanotify_init": 262, "fanotify_mark": 263,
    "socket": 198, "socketpair": 199,
})

#: The machines (``os.uname().machine``) the filter has a table for.
ARCHES: dict[str, Arch] = {"x86_64": _X86_64, "aarch64": _AARCH64}


def host_arch() -> Arch:
    """The table of the machine the arena runs on. Raises :class:`UnsupportedMachine`
    elsewhere, or under a 32-bit or big-endian Python (whose bots would be of that ABI)."""
    machine = os.uname().machine
    arch = ARCHES.get(machine)
    if arch is None:
        raise UnsupportedMachine(
            f"the strict sandbox's system call filter has tables for {' and '.join(ARCHES)} only, not {machine}"
        )
    if struct.calcsize("P") != 8 or sys.byteorder != "little":
        raise UnsupportedMachine(
            f"the strict sandbox's system call filter needs a 64-bit little-endian Python on {machine} "
            f"(this one is {struct.calcsize('P') * 8}-bit {sys.byteorder}-endian)"
        )
    return arch


# -- assembling ---------------------------------------------------------------------------------

# An instruction before its jumps are resolved: (code, jt, jf, k), jt/jf a label or 0 (next).
_Op = tuple[int, "str | int", "str | int", int]


def assemble(ops: Sequence[_Op | str]) -> bytes:
    """The bytes of a program given as instructions and labels (a ``str`` alone marks
    the place of the next instruction; a jump names a label ahead, or 0 for the next).
    Raises ValueError for a jump backwards, too far for its 8 bits, or to no label."""
    labels: dict[str, int] = {}
    insns: list[_Op] = []
    for op in ops:
        if isinstance(op, str):
            if op in labels:
                raise ValueError(f"label {op!r} defined twice")
            labels[op] = len(insns)
        else:
            insns.append(op)
    out = bytearray()
    for pc, (code, jt, jf, k) in enumerate(insns):
        offsets = []
        for target in (jt, jf):
            if isinstance(target, int):
                offsets.append(target)
                continue
            if target not in labels:
                raise ValueError(f"jump to unknown label {target!r}")
            offsets.append(labels[target] - pc - 1)
        if not all(0 <= o <= 255 for o in offsets):
            raise ValueError(f"instruction {pc}: jump offsets {offsets} do not fit in 0..255")
        out += _INSN.pack(code, offsets[0], offsets[1], k)
    return bytes(out)


def _ret(value: int) -> _Op:
    return (_RET_K, 0, 0, value)


def program_for(arch: Arch, *, build: bool = False) -> bytes:
    """The filter for ``arch``, as the bytes of its ``struct sock_filter`` array: for a
    bot at game time, or for a build step (``build``: the file locks allowed)."""
    ops: list[_Op | str] = [
        (_LD_W_ABS, 0, 0, _ARCH),
        (_JEQ_K, 0, "kill", arch.audit),
        (_LD_W_ABS, 0, 0, _NR),
    ]
    if arch.x32:
        ops.append((_JSET_K, "kill", 0, _X32_SYSCALL_BIT))
    # Each call once in the chain, with what refuses it (fcntl has two refusals).
    refusals: dict[str, list[Refusal]] = {}
    for refusal in REFUSED:
        if build and refusal.game_only:
            continue
        for name in refusal.names:
            if name in arch.numbers:
                refusals.setdefault(name, []).append(refusal)
    returns = {errno.EPERM, errno.ENOSYS}
    blocks: list[_Op | str] = []
    for name, (refusal, *more) in refusals.items():
        nr = arch.numbers[name]
        returns.update(r.errno for r in (refusal, *more))
        if not refusal.only:
            ops.append((_JEQ_K, _errno_label(refusal.errno), 0, nr))
            continue
        ops.append((_JEQ_K, name, 0, nr))
        blocks.append(name)
        if refusal.only == "namespaces":
            mask = _UNSHARE_NAMESPACES if name == "unshare" else _CLONE_NAMESPACES
            blocks += [(_LD_W_ABS, 0, 0, _arg_low(0)), (_JSET_K, "eperm", "allow", mask)]
        elif refusal.only in ("personas", "families"):
            allowed = PERSONALITIES_ALLOWED if refusal.only == "personas" else refusal.values
            *others, last = allowed
            blocks.append((_LD_W_ABS, 0, 0, _arg_low(0)))
            blocks += [(_JEQ_K, "allow", 0, value) for value in others]
            blocks.append((_JEQ_K, "allow", _errno_label(refusal.errno), last))
        elif refusal.only == "commands":
            refused = [(value, r.errno) for r in (refusal, *more) for value in r.values]
            blocks.append((_LD_W_ABS, 0, 0, _arg_low(1)))
            blocks += [(_JEQ_K, _errno_label(e), 0, value) for value, e in refused[:-1]]
            blocks.append((_JEQ_K, _errno_label(refused[-1][1]), "allow", refused[-1][0]))
        else:
            raise AssertionError(f"{name}: unknown kind of refusal {refusal.only!r}")
    # A call the chain did not stop is allowed; then the argument checks, then the shared
    # returns (cBPF jumps forward only).
    ops += [_ret(RET_ALLOW), *blocks, "allow", _ret(RET_ALLOW)]
    for number in sorted(returns):
        ops += [_errno_label(number), _ret(RET_ERRNO | number)]
    ops += ["kill", _ret(RET_KILL_PROCESS)]
    return assemble(ops)


def _errno_label(number: int) -> str:
    return errno.errorcode[number].lower()


@cache
def program(*, build: bool = False) -> bytes:
    """The filter for the machine the arena runs on (see :func:`host_arch`); ``build``:
    the one for a build step."""
    return program_for(host_arch(), build=build)


def filter_fd(*, build: bool = False) -> int:
    """The read end of a pipe holding :func:`program` (``build``: a build step's) and
    then its end (bwrap reads it whole and closes it): non-inheritable, so only a spawn
    that lists it in ``pass_fds`` hands it on. The caller closes it after the spawn."""
    data = program(build=build)
    r, w = os.pipe()
    try:
        # Far below a pipe's buffer (64 KiB; at least one page): the write cannot block.
        os.write(w, data)
        if r < 3:  # an arena started with stdin closed: keep clear of the fds the spawn dups onto 0-2
            r, low = fcntl.fcntl(r, fcntl.F_DUPFD_CLOEXEC, 3), r
            os.close(low)
    except BaseException:
        os.close(r)
        raise
    finally:
        os.close(w)
    return r
