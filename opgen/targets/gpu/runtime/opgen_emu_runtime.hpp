// opgen CPU execution layer: the scheduler, the fibers and the device memory.
// Hand-written, versioned with opgen. Included by the generated host code only (one
// translation unit per kernel library); the kernel's own translation unit sees
// opgen_emu.hpp and the CUDA or Metal names.
//
// launch(grid, block, body): blocks (threadgroups) run one after another; each block's
// threads run as fibers on this OS thread, each until it calls barrier() or returns. When
// every thread is either waiting or done:
//   - all done: the block is finished;
//   - all waiting at the same barrier call: the barrier is released, the next round starts;
//   - some done and some waiting, or waiting at different barrier calls: the kernel is
//     wrong (on a GPU it hangs or corrupts results), and launch throws an opgen::Error
//     naming the block, the threads and the barrier's line.
// Odd launches run the blocks, and the threads within each round, in reverse order. The
// verifier calls every kernel twice per example and demands equal results, so a kernel
// whose result depends on the order threads or blocks run in (a missing barrier, a race
// on shared or global memory) shows up as a difference between the two calls.
//
// Device buffers sit between PROT_NONE guard pages (a read or write before the start or
// past the end faults), with the slack between the data's end and the trailing guard filled
// with 0xff bytes and checked after every launch. Shared (threadgroup) memory is filled with
// 0xff bytes (NaN in every float) before each block. In an AddressSanitizer build, buffers
// come from the allocator instead (its redzones catch every out-of-bounds access, to the
// byte) and shared arrays carry ASan's own redzones.
#ifndef OPGEN_EMU_RUNTIME_HPP
#define OPGEN_EMU_RUNTIME_HPP

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "opgen_emu.hpp"
// opgen_kernel.hpp is included first by the generated code (its shim helpers have no include guard).
#ifndef OPGEN_KERNEL_HPP
#error "include opgen_kernel.hpp before this header"
#endif

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define OPGEN_EMU_ASAN 1
#else
#define OPGEN_EMU_ASAN 0
#endif

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

// The bounds of the section every __shared__ / threadgroup array lives in (the linker
// defines them; weak: a kernel without shared memory has no such section).
extern "C" char __start_opgen_shared[] __attribute__((weak, visibility("hidden")));
extern "C" char __stop_opgen_shared[] __attribute__((weak, visibility("hidden")));

#if defined(__x86_64__)
// A stack switch without a system call (swapcontext saves the signal mask with one): push
// the callee-saved registers, swap stack pointers, pop. The SSE and x87 control words are
// the OS thread's and nothing changes them (the policy forbids it), so they are not switched.
extern "C" void opgen_emu_switch(void** save_sp, void* load_sp) __attribute__((visibility("hidden")));
extern "C" void opgen_emu_trampoline() __attribute__((visibility("hidden")));
asm(R"(
  .text
  .globl opgen_emu_switch
  .hidden opgen_emu_switch
  .type opgen_emu_switch, @function
opgen_emu_switch:
  .cfi_startproc
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .cfi_endproc
  .size opgen_emu_switch, .-opgen_emu_switch

  .globl opgen_emu_trampoline
  .hidden opgen_emu_trampoline
  .type opgen_emu_trampoline, @function
opgen_emu_trampoline:
  movq %r12, %rdi
  callq *%r13
  ud2
  .size opgen_emu_trampoline, .-opgen_emu_trampoline
)");
#endif

// The scheduler is opgen's own code, run for every thread of every block: the sanitizer
// build checks the kernel's code and the buffers, not these loops (they would cost half its time).
#define OPGEN_EMU_UNCHECKED __attribute__((no_sanitize("address", "undefined")))

namespace opgen_emu {

struct Fiber {
  void* sp = nullptr;     // saved stack pointer while switched out
  char* stack = nullptr;  // lowest usable address (a guard page lies below it)
  size_t size = 0;
  Dim3 tid{0, 0, 0};
  bool done = false;
  bool waiting = false;
  const char* spelling = "";
  const char* file = "";
  int line = 0;
  int site = -1;  // which barrier call it waits at
  void* asan_fake = nullptr;
#if !defined(__x86_64__)
  ucontext_t ctx;
#endif
};

struct Scheduler {
  std::vector<Fiber> fibers;
  Fiber* running = nullptr;
  void* main_sp = nullptr;
#if !defined(__x86_64__)
  ucontext_t main_ctx;
#endif
  const void* main_bottom = nullptr;  // the launching stack, for AddressSanitizer's fiber switches
  size_t main_size = 0;
  void (*body)(void*) = nullptr;
  void* arg = nullptr;
};

inline Scheduler* scheduler = nullptr;
inline unsigned long long launches = 0;  // odd launches run in reverse order

}  // namespace opgen_emu

// The shared-memory race detector's hooks and shadow state (live in the race-check build only).
#include "opgen_emu_racecheck.hpp"

namespace opgen_emu {

constexpr size_t kStackBytes = OPGEN_EMU_ASAN ? (512u << 10) : (128u << 10);
constexpr size_t kMaxThreadsPerBlock = 1024;

inline size_t page_size() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

// Fiber stacks are kept for the life of the process and reused by every launch.
inline std::vector<char*>& stack_pool() {
  static std::vector<char*> pool;
  return pool;
}

inline char* stack_at(size_t i) {
  auto& pool = stack_pool();
  while (pool.size() <= i) {
    size_t guard = page_size();
    void* p = mmap(nullptr, kStackBytes + guard, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw opgen::Error(opgen::ErrorKind::Internal, "the CPU execution layer could not map a fiber stack");
    if (mprotect(p, guard, PROT_NONE) != 0)  // a thread that overruns its stack faults instead of corrupting another's
      throw opgen::Error(opgen::ErrorKind::Internal, "the CPU execution layer could not protect a fiber stack");
    pool.push_back(static_cast<char*>(p) + guard);
  }
  return pool[i];
}

inline std::string dim_text(Dim3 d) {
  return "(" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + ")";
}

inline void asan_start_switch(void** fake, const void* bottom, size_t size) {
#if OPGEN_EMU_ASAN
  __sanitizer_start_switch_fiber(fake, bottom, size);
#else
  (void)fake, (void)bottom, (void)size;
#endif
}

inline void asan_finish_switch(void* fake, const void** bottom, size_t* size) {
#if OPGEN_EMU_ASAN
  __sanitizer_finish_switch_fiber(fake, bottom, size);
#else
  (void)fake, (void)bottom, (void)size;
#endif
}

// Fiber side: give control back to the scheduler (the fiber waits at a barrier or is done).
OPGEN_EMU_UNCHECKED inline void yield_to_scheduler(Fiber* f) {
  Scheduler* s = scheduler;
  asan_start_switch(f->done ? nullptr : &f->asan_fake, s->main_bottom, s->main_size);
#if defined(__x86_64__)
  opgen_emu_switch(&f->sp, s->main_sp);
#else
  swapcontext(&f->ctx, &s->main_ctx);
#endif
  asan_finish_switch(f->asan_fake, &s->main_bottom, &s->main_size);
}

extern "C" [[noreturn]] __attribute__((visibility("hidden"))) void opgen_emu_fiber_main(Fiber* f) {
  Scheduler* s = scheduler;
  asan_finish_switch(nullptr, &s->main_bottom, &s->main_size);
  s->body(s->arg);
  f->done = true;
  yield_to_scheduler(f);
  __builtin_trap();  // a finished fiber is never resumed
}

#if !defined(__x86_64__)
inline void fiber_entry_ucontext(unsigned hi, unsigned lo) {
  opgen_emu_fiber_main(reinterpret_cast<Fiber*>((static_cast<uintptr_t>(hi) << 32) | lo));
}
#endif

OPGEN_EMU_UNCHECKED inline void start_fiber(Fiber& f) {
#if defined(__x86_64__)
  // What opgen_emu_switch pops, then returns into: the trampoline calls the entry with the
  // fiber, on a stack 16-byte aligned at the call.
  uintptr_t top = (reinterpret_cast<uintptr_t>(f.stack) + f.size) & ~uintptr_t(15);
  auto* slot = reinterpret_cast<uint64_t*>(top);
  slot[-1] = reinterpret_cast<uint64_t>(&opgen_emu_trampoline);  // ret target
  slot[-2] = 0;                                                     // rbp
  slot[-3] = 0;                                                     // rbx
  slot[-4] = reinterpret_cast<uint64_t>(&f);                        // r12: the argument
  slot[-5] = reinterpret_cast<uint64_t>(&opgen_emu_fiber_main);     // r13: the entry
  slot[-6] = 0;                                                     // r14
  slot[-7] = 0;                                                     // r15
  f.sp = &slot[-7];
#else
  getcontext(&f.ctx);
  f.ctx.uc_stack.ss_sp = f.stack;
  f.ctx.uc_stack.ss_size = f.size;
  f.ctx.uc_link = nullptr;
  uintptr_t p = reinterpret_cast<uintptr_t>(&f);
  makecontext(&f.ctx, reinterpret_cast<void (*)()>(&fiber_entry_ucontext), 2, unsigned(p >> 32), unsigned(p));
#endif
}

// AddressSanitizer: the frames a fiber abandoned when it last switched out (a finished fiber's
// entry and switch; every frame of one stopped at a barrier by a misuse error) keep their
// redzones poisoned. Before the stack serves another fiber they are cleared: from the saved
// stack pointer to the top after a normal finish (a few hundred bytes), all of it otherwise.
inline void release_stack(Fiber& f, bool whole) {
#if OPGEN_EMU_ASAN
  char* top = f.stack + f.size;
  char* from = whole || f.sp == nullptr ? f.stack : static_cast<char*>(f.sp);
  __asan_unpoison_memory_region(from, static_cast<size_t>(top - from));
#else
  (void)f, (void)whole;
#endif
}

// Scheduler side: run one fiber until it waits at a barrier or is done.
OPGEN_EMU_UNCHECKED inline void resume(Scheduler& s, Fiber& f) {
  s.running = &f;
  state.thread_idx = f.tid;
  void* fake = nullptr;
  asan_start_switch(&fake, f.stack, f.size);
#if defined(__x86_64__)
  opgen_emu_switch(&s.main_sp, f.sp);
#else
  swapcontext(&s.main_ctx, &f.ctx);
#endif
  asan_finish_switch(fake, nullptr, nullptr);
  s.running = nullptr;
}

[[noreturn]] inline void misuse(const std::string& what) {
  throw opgen::Error(opgen::ErrorKind::Internal, what);
}

inline std::string site(const Fiber& f) {
  return std::string(f.spelling) + " at " + f.file + ":" + std::to_string(f.line);
}

// One block: every thread as a fiber, round after round (one round per barrier).
OPGEN_EMU_UNCHECKED inline void run_block(Scheduler& s, size_t threads, bool reverse) {
  if (__start_opgen_shared != nullptr && +__stop_opgen_shared > +__start_opgen_shared)
    std::memset(__start_opgen_shared, 0xff, static_cast<size_t>(__stop_opgen_shared - __start_opgen_shared));
  race::begin_block();  // a new barrier interval (the race check's)
  for (size_t i = 0; i < threads; ++i) {
    Fiber& f = s.fibers[i];
    f.done = f.waiting = false;
    f.asan_fake = nullptr;
    start_fiber(f);
  }
  for (;;) {
    for (size_t n = 0; n < threads; ++n) {
      Fiber& f = s.fibers[reverse ? threads - 1 - n : n];
      if (!f.done && !f.waiting) resume(s, f);
    }
    const Fiber* waiter = nullptr;
    const Fiber* finished = nullptr;
    for (size_t i = 0; i < threads; ++i) {
      const Fiber& f = s.fibers[i];
      if (f.waiting && waiter == nullptr) waiter = &f;
      if (f.done && finished == nullptr) finished = &f;
    }
    if (waiter == nullptr) {  // every thread returned
      race::check(0);         // a race in the block's last interval
      for (size_t i = 0; i < threads; ++i) release_stack(s.fibers[i], false);
      return;
    }
    std::string block = dim_text(state.block_idx);
    if (finished != nullptr)
      misuse("barrier misuse in block " + block + ": thread " + dim_text(waiter->tid) + " waits at " + site(*waiter) +
             " but thread " + dim_text(finished->tid) + " has returned from the kernel without reaching it. Every "
             "thread of a block must reach every barrier (on a GPU this hangs or corrupts shared memory): do not "
             "return early or branch around a barrier; guard the work with the bounds check, not the barrier");
    for (size_t i = 0; i < threads; ++i) {
      const Fiber& f = s.fibers[i];
      if (f.site != waiter->site)  // every thread waits (none is done)
        misuse("barrier misuse in block " + block + ": threads wait at different barriers, thread " +
               dim_text(waiter->tid) + " at " + site(*waiter) + " and thread " + dim_text(f.tid) + " at " +
               site(f) + ". A barrier inside a branch or loop that threads of one block take differently hangs a "
               "GPU; every thread of a block must reach the same barriers in the same order");
    }
    race::check(waiter->line);  // a race in the interval this barrier closes, before it opens the next
    race::next_interval(waiter->line);
    for (size_t i = 0; i < threads; ++i) s.fibers[i].waiting = false;
  }
}

struct Geometry {
  Dim3 grid;
  Dim3 block;
};

inline void check_geometry(const Geometry& g) {
  const Dim3 b = g.block, gr = g.grid;
  unsigned long long threads = 1ull * b.x * b.y * b.z;
  if (b.x == 0 || b.y == 0 || b.z == 0 || threads > kMaxThreadsPerBlock || b.z > 64)
    misuse("the launch line asks for a block of " + dim_text(b) + " threads; a block has 1 to 1024 threads "
           "(z at most 64)");
  if (gr.y > 65535 || gr.z > 65535 || gr.x > 2147483647u)
    misuse("the launch line asks for a grid of " + dim_text(gr) + " blocks; y and z may be at most 65535 "
           "(x at most 2^31 - 1): map the larger extent to x");
}

// Runs body() once per thread of every block of the grid (a grid with a zero extent runs nothing).
template <class Body>
inline void launch(const Geometry& g, Body&& body) {
  check_geometry(g);
  if (g.grid.x == 0 || g.grid.y == 0 || g.grid.z == 0) return;
  Scheduler s;
  const size_t threads = size_t(g.block.x) * g.block.y * g.block.z;
  s.fibers.resize(threads);
  for (size_t i = 0; i < threads; ++i) {
    Fiber& f = s.fibers[i];
    f.stack = stack_at(i);
    f.size = kStackBytes;
    f.tid = {unsigned(i % g.block.x), unsigned((i / g.block.x) % g.block.y), unsigned(i / (size_t(g.block.x) * g.block.y))};
  }
  s.body = [](void* p) { (*static_cast<Body*>(p))(); };
  s.arg = const_cast<void*>(static_cast<const void*>(&body));
  const bool reverse = (launches++ & 1) != 0;
  race::begin_launch();
  scheduler = &s;
  state.block_dim = g.block;
  state.grid_dim = g.grid;
  const unsigned long long blocks = 1ull * g.grid.x * g.grid.y * g.grid.z;
  try {
    for (unsigned long long n = 0; n < blocks; ++n) {
      unsigned long long b = reverse ? blocks - 1 - n : n;
      state.block_idx = {unsigned(b % g.grid.x), unsigned((b / g.grid.x) % g.grid.y),
                         unsigned(b / (1ull * g.grid.x * g.grid.y))};
      run_block(s, threads, reverse);
    }
  } catch (...) {
    for (Fiber& f : s.fibers) release_stack(f, true);
    scheduler = nullptr;
    throw;
  }
  scheduler = nullptr;
}

// Device memory: one allocation per buffer, between guard pages (see the top of the file).
template <class T>
class Buffer {
 public:
  Buffer(const char* name, size_t count) : name_(name), count_(count) { allocate(); }
  Buffer(const char* name, const T* src, size_t count) : name_(name), count_(count) {
    allocate();
    if (count) std::memcpy(data_, src, count * sizeof(T));
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() {
#if OPGEN_EMU_ASAN
    std::free(data_);
#else
    munmap(base_, mapped_);
#endif
  }
  T* get() const { return data_; }
  size_t size() const { return count_; }
  // After a launch: the kernel wrote into the slack behind the data (past the end).
  void check_tail() const {
#if !OPGEN_EMU_ASAN
    const unsigned char* tail = reinterpret_cast<const unsigned char*>(data_ + count_);
    const unsigned char* end = reinterpret_cast<const unsigned char*>(base_) + mapped_ - page_size();
    for (const unsigned char* p = tail; p < end; ++p)
      if (*p != 0xff)
        misuse(std::string("the kernel wrote past the end of device buffer `") + name_ + "` (" +
               std::to_string(count_) + " elements): byte " + std::to_string(p - tail) +
               " after its last element changed. Check every index against its bound");
#endif
  }
  void copy_out(T* dst) const {
    check_tail();
    if (count_) std::memcpy(dst, data_, count_ * sizeof(T));
  }

 private:
  void allocate() {
    const size_t bytes = count_ * sizeof(T);
#if OPGEN_EMU_ASAN
    void* p = nullptr;
    if (posix_memalign(&p, 256, bytes ? bytes : 1) != 0) throw std::bad_alloc();
    data_ = static_cast<T*>(p);
    std::memset(p, 0xff, bytes);
#else
    const size_t page = page_size();
    const size_t body = (bytes + page - 1) / page * page + page;  // at least one page of slack
    mapped_ = body + 2 * page;
    base_ = mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base_ == MAP_FAILED) throw std::bad_alloc();
    char* b = static_cast<char*>(base_);
    if (mprotect(b, page, PROT_NONE) != 0 || mprotect(b + page + body, page, PROT_NONE) != 0) {
      munmap(base_, mapped_);
      throw opgen::Error(opgen::ErrorKind::Internal, "the CPU execution layer could not protect a device buffer");
    }
    data_ = reinterpret_cast<T*>(b + page);  // page-aligned: a read or write before it faults
    std::memset(b + page, 0xff, body);       // unwritten outputs read as NaN, the slack as 0xff
#endif
  }

  const char* name_;
  size_t count_;
  T* data_ = nullptr;
  void* base_ = nullptr;
  size_t mapped_ = 0;
};

}  // namespace opgen_emu

// The barrier the device code calls (declared in opgen_emu.hpp).
OPGEN_EMU_UNCHECKED void opgen_emu::barrier(const char* spelling, const char* file, int line, int site) {
  Scheduler* s = scheduler;
  if (s == nullptr || s->running == nullptr) return;  // outside a launch (not reachable from a kernel)
  Fiber* f = s->running;
  f->waiting = true;
  f->spelling = spelling;
  f->file = file;
  f->line = line;
  f->site = site;
  yield_to_scheduler(f);
}

#endif
