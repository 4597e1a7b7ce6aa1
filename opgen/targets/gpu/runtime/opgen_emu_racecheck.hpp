// opgen CPU execution layer: the shared-memory race detector. Hand-written, versioned with opgen.
// Included by opgen_emu_runtime.hpp (the host code's translation unit), never by the kernel's.
//
// The rule is compute-sanitizer racecheck's: two threads of one block touch the same byte of
// shared (threadgroup) memory in the same barrier interval, and at least one of them writes. On a
// GPU those accesses run concurrently and the result depends on timing; on the layer the threads
// run one after another, so the values can come out right in both schedules and only this check
// sees the bug (an unsynchronised `sum += x` from several threads, a tree reduction missing a
// barrier between two levels, a tile overwritten while other threads still read it).
//
// How it sees the accesses: the gate's race-check build (opgen.gpu.build.build_racecheck)
// compiles the kernel's translation unit with GCC's ThreadSanitizer *instrumentation*
// (-fsanitize=thread) but links no libtsan: every load and store the kernel makes calls one of
// the __tsan_* hooks below, which are opgen's own. They ignore every address outside
// [__start_opgen_shared, __stop_opgen_shared) (the section every __shared__ / threadgroup array
// lives in), so device buffers, the stack and the registers' spills cost a compare. Inside it a
// per-byte shadow cell holds the interval's last writer and up to two distinct readers, each with
// the interval it belongs to and the return address of its hook call (the access's site). The
// scheduler opens a new interval at every block start and every released barrier, so nothing is
// ever cleared: a cell from an older interval is simply stale. None of this needs libtsan's
// happens-before machinery, which the fibers would confuse: the scheduler knows the intervals.
//
// The first conflict is kept; the scheduler reports it when the interval ends (a barrier
// releases or every thread returned), on its own stack, as an opgen::Error the host code returns
// like barrier misuse. An opgen_error message has 256 bytes, so the report is a compact record
// (sites as offsets in the library) that the gate expands with addr2line and nm into the
// kernel's file:line and the shared array's name (opgen.gpu.admission.explain_race).
//
// In every other build the hooks exist but nothing calls them (the kernel is not instrumented),
// and the scheduler's calls below cost an increment per interval.
#ifndef OPGEN_EMU_RACECHECK_HPP
#define OPGEN_EMU_RACECHECK_HPP

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

// The library's own ELF header (the linker defines it): its address is the load base, so a code
// address minus it is what addr2line reads from the library file.
extern "C" const char __ehdr_start[] __attribute__((weak, visibility("hidden")));

#define OPGEN_EMU_RACE_HOOK extern "C" __attribute__((visibility("hidden"), noinline, no_sanitize("address", "undefined", "thread")))

namespace opgen_emu::race {

// One byte of shared memory. Epoch 0 is never current (epochs start at 1).
struct Cell {
  uint32_t w_epoch, r_epoch, r2_epoch;  // the interval each of the three accesses below belongs to
  uint32_t w_pc, r_pc, r2_pc;           // their sites (library offsets)
  uint16_t w_tid, r_tid, r2_tid;        // their threads (linear index in the block)
};

struct Access {
  uint16_t tid = 0;
  bool write = false;
  uint32_t pc = 0;
};

struct Report {
  bool found = false;
  Access now, before;  // the access that found the conflict, and the earlier one it conflicts with
  uint32_t addr = 0;   // the byte, as a library offset (the shared array's symbol covers it)
  unsigned size = 0;   // bytes the later access touched
  Dim3 block{0, 0, 0};
  unsigned interval = 0;
  int opened = 0;  // line of the barrier that opened the interval (0: the kernel's start)
};

inline Cell* cells = nullptr;  // one per byte of the section; allocated at the first block that has one
inline size_t cell_count = 0;
inline uint32_t epoch = 0;     // the current interval, over all blocks and launches
inline unsigned interval = 0;  // ... counted from the block's start, for messages
inline int opened = 0;
inline Report report{};

inline size_t shared_bytes() {
  if (__start_opgen_shared == nullptr || !(+__stop_opgen_shared > +__start_opgen_shared)) return 0;
  return static_cast<size_t>(__stop_opgen_shared - __start_opgen_shared);
}

inline uint32_t offset_of(const void* p) {
  uintptr_t base = reinterpret_cast<uintptr_t>(__ehdr_start);
  uintptr_t a = reinterpret_cast<uintptr_t>(p);
  return static_cast<uint32_t>(base != 0 && a >= base ? a - base : a);
}

inline void advance() {
  if (++epoch == 0) {  // wrapped (2^32 intervals in one process): forget everything, start again
    if (cells) std::memset(cells, 0, cell_count * sizeof(Cell));
    epoch = 1;
  }
}

// The scheduler, at the start of a launch / a block / after a released barrier.
inline void begin_launch() { report = Report{}; }

inline void begin_block() {
  const size_t n = shared_bytes();
  if (n == 0) return;
  if (cell_count != n) {
    std::free(cells);
    cells = static_cast<Cell*>(std::calloc(n, sizeof(Cell)));
    cell_count = cells ? n : 0;
    if (!cells) throw opgen::Error(opgen::ErrorKind::Internal, "the CPU execution layer could not allocate the race check's shadow memory");
  }
  advance();
  interval = 0;
  opened = 0;
}

inline void next_interval(int barrier_line) {
  advance();
  ++interval;
  opened = barrier_line;
}

inline void conflict(uint16_t tid, bool write, uint32_t pc, uint16_t other, bool other_write, uint32_t other_pc,
                     const void* byte, unsigned size) {
  report.found = true;
  report.now = {tid, write, pc};
  report.before = {other, other_write, other_pc};
  report.addr = offset_of(byte);
  report.size = size;
  report.block = state.block_idx;
  report.interval = interval;
  report.opened = opened;
}

// One access of `size` bytes at `p` by the running thread, made at `pc` (the hook's return address).
__attribute__((no_sanitize("address", "undefined", "thread"))) inline void access(const void* p, size_t size,
                                                                                  bool write, const void* pc) {
  const uintptr_t base = reinterpret_cast<uintptr_t>(__start_opgen_shared);
  const uintptr_t off = reinterpret_cast<uintptr_t>(p) - base;
  if (off >= cell_count || report.found) return;  // not shared memory (or a conflict already stands)
  Scheduler* s = scheduler;
  if (s == nullptr || s->running == nullptr) return;  // not a GPU thread
  const uint16_t t = static_cast<uint16_t>(s->running - s->fibers.data());
  const uint32_t site = offset_of(static_cast<const char*>(pc) - 1);  // inside the call instruction
  const uint32_t e = epoch;
  const size_t end = off + size < cell_count ? off + size : cell_count;
  for (size_t i = off; i < end; ++i) {
    Cell& c = cells[i];
    const void* byte = __start_opgen_shared + i;
    if (c.w_epoch == e && c.w_tid != t) {  // written by another thread in this interval: W-W or W-R
      conflict(t, write, site, c.w_tid, true, c.w_pc, byte, unsigned(size));
      return;
    }
    if (write) {
      if (c.r_epoch == e && c.r_tid != t) {  // read by another thread in this interval: R-W
        conflict(t, true, site, c.r_tid, false, c.r_pc, byte, unsigned(size));
        return;
      }
      if (c.r2_epoch == e && c.r2_tid != t) {
        conflict(t, true, site, c.r2_tid, false, c.r2_pc, byte, unsigned(size));
        return;
      }
      c.w_epoch = e, c.w_tid = t, c.w_pc = site;
    } else if (c.r_epoch != e) {
      c.r_epoch = e, c.r_tid = t, c.r_pc = site, c.r2_epoch = 0;
    } else if (c.r_tid != t && c.r2_epoch != e) {  // a second distinct reader: a later writer differs from one of them
      c.r2_epoch = e, c.r2_tid = t, c.r2_pc = site;
    }
  }
}

inline const char* tid_text(uint16_t linear, char* buf, size_t n) {
  const Dim3 d = state.block_dim;
  std::snprintf(buf, n, "%u.%u.%u", linear % d.x, (linear / d.x) % d.y, linear / (d.x * d.y));
  return buf;
}

// The scheduler, when an interval ends: `closing` is the line of the barrier every thread waits at
// (0: every thread returned). The record fits opgen_error's 256 bytes; the gate expands it.
inline void check(int closing) {
  if (!report.found) return;
  const Report r = report;
  report = Report{};
  char now[24], before[24], text[256];
  std::snprintf(text, sizeof text,
                "shared-memory data race {opgen-race b=%u.%u.%u i=%u o=%d c=%d a=0x%x n=%u now=%c,%s,0x%x "
                "before=%c,%s,0x%x}",
                r.block.x, r.block.y, r.block.z, r.interval, r.opened, closing, r.addr, r.size, r.now.write ? 'W' : 'R',
                tid_text(r.now.tid, now, sizeof now), r.now.pc, r.before.write ? 'W' : 'R',
                tid_text(r.before.tid, before, sizeof before), r.before.pc);
  throw opgen::Error(opgen::ErrorKind::Internal, text);
}

}  // namespace opgen_emu::race

// The hooks GCC 12's -fsanitize=thread emits for plain, unaligned, volatile and ranged accesses
// (`nm` on an instrumented object lists them), and the bookkeeping ones as no-ops: function entry
// and exit (the build turns them off; kept for a compiler that ignores the param), vptr updates.
// Atomics have no hooks: the GPU policy rejects them before anything is compiled.
#define OPGEN_EMU_RACE_ACCESS(name, bytes, write)                                            \
  OPGEN_EMU_RACE_HOOK void name(void* p) {                                                   \
    ::opgen_emu::race::access(p, bytes, write, __builtin_return_address(0));                 \
  }
#define OPGEN_EMU_RACE_SIZES(prefix, write) \
  OPGEN_EMU_RACE_ACCESS(prefix##1, 1, write) \
  OPGEN_EMU_RACE_ACCESS(prefix##2, 2, write) \
  OPGEN_EMU_RACE_ACCESS(prefix##4, 4, write) \
  OPGEN_EMU_RACE_ACCESS(prefix##8, 8, write) \
  OPGEN_EMU_RACE_ACCESS(prefix##16, 16, write)
OPGEN_EMU_RACE_SIZES(__tsan_read, false)
OPGEN_EMU_RACE_SIZES(__tsan_write, true)
OPGEN_EMU_RACE_SIZES(__tsan_unaligned_read, false)
OPGEN_EMU_RACE_SIZES(__tsan_unaligned_write, true)
OPGEN_EMU_RACE_SIZES(__tsan_volatile_read, false)
OPGEN_EMU_RACE_SIZES(__tsan_volatile_write, true)
#undef OPGEN_EMU_RACE_SIZES
#undef OPGEN_EMU_RACE_ACCESS

OPGEN_EMU_RACE_HOOK void __tsan_read_range(void* p, unsigned long size) {
  ::opgen_emu::race::access(p, size, false, __builtin_return_address(0));
}
OPGEN_EMU_RACE_HOOK void __tsan_write_range(void* p, unsigned long size) {
  ::opgen_emu::race::access(p, size, true, __builtin_return_address(0));
}
OPGEN_EMU_RACE_HOOK void __tsan_init() {}
OPGEN_EMU_RACE_HOOK void __tsan_func_entry(void*) {}
OPGEN_EMU_RACE_HOOK void __tsan_func_exit() {}
OPGEN_EMU_RACE_HOOK void __tsan_vptr_update(void**, void*) {}
OPGEN_EMU_RACE_HOOK void __tsan_vptr_read(void**) {}

#undef OPGEN_EMU_RACE_HOOK

#endif
