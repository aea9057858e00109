//===- steps.cpp - The GPU bench's steps, each in a child process ---------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//
//
// The child reports on a pipe, one line per record:
//   I            its setup is done
//   S <i>        step i starts
//   R <i> <row>  a row of step i: its fields separated by \x1f
//   L <i> <text> another line of step i
//   E <i>        step i ended
//
//===----------------------------------------------------------------------===//

#include "steps.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <poll.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {
using Clock = std::chrono::steady_clock;
constexpr char kSeparator = '\x1f';

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// The text with the record and field separators replaced by spaces.
std::string clean(const std::string &text) {
  std::string out = text;
  for (char &c : out)
    if (c == '\n' || c == '\r' || c == kSeparator)
      c = ' ';
  return out;
}

std::string number(double value) {
  char buffer[40];
  std::snprintf(buffer, sizeof(buffer), "%.17g", value);
  return buffer;
}

std::string encodeRow(const Row &r) {
  const std::string fields[] = {clean(r.group),     clean(r.shape),
                                clean(r.impl),      number(r.ms),
                                number(r.rate),     clean(r.rateUnit),
                                number(r.relError), std::to_string(r.unwritten),
                                number(r.vsInt8),   clean(r.note)};
  std::string out;
  for (const std::string &f : fields)
    out += (out.empty() ? "" : std::string(1, kSeparator)) + f;
  return out;
}

bool decodeRow(const std::string &text, Row &r) {
  std::vector<std::string> f(1);
  for (char c : text) {
    if (c == kSeparator)
      f.emplace_back();
    else
      f.back() += c;
  }
  if (f.size() != 10)
    return false;
  r.group = f[0];
  r.shape = f[1];
  r.impl = f[2];
  r.ms = std::strtod(f[3].c_str(), nullptr);
  r.rate = std::strtod(f[4].c_str(), nullptr);
  r.rateUnit = f[5];
  r.relError = std::strtod(f[6].c_str(), nullptr);
  r.unwritten = std::strtoll(f[7].c_str(), nullptr, 10);
  r.vsInt8 = std::strtod(f[8].c_str(), nullptr);
  r.note = f[9];
  return true;
}

/// Writes all of `text` to `fd`; the child has nothing left to do when the
/// parent is gone.
void send(int fd, const std::string &text) {
  size_t written = 0;
  while (written < text.size()) {
    ssize_t n = write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      _exit(3);
    written += size_t(n);
  }
}

/// A child process: `setup`, then steps from `first` on until the deadline.
[[noreturn]] void runChild(const std::vector<Step> &steps,
                           std::vector<StepResult> done, size_t first,
                           const std::function<void()> &setup,
                           Clock::time_point deadline, int fd) {
  setup();
  send(fd, "I\n");
  for (size_t i = first; i < steps.size() && Clock::now() < deadline; ++i) {
    std::string id = std::to_string(i);
    send(fd, "S " + id + "\n");
    StepResult result = steps[i].run(done);
    std::string records;
    for (const Row &r : result.rows)
      records += "R " + id + " " + encodeRow(r) + "\n";
    for (const std::string &line : result.lines)
      records += "L " + id + " " + clean(line) + "\n";
    send(fd, records + "E " + id + "\n");
    done[i] = std::move(result);
  }
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(0);
}

std::string describeStatus(int status) {
  if (WIFEXITED(status))
    return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return "killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  return "ended with wait status " + std::to_string(status);
}

/// The parent's view of one child.
struct Child {
  bool ready = false; ///< its setup is done
  long current = -1;  ///< the step it runs, -1 between steps
  size_t next = 0;    ///< the first step it has not ended
  Clock::time_point since = Clock::now(); ///< start of setup or step
  std::string killedWhy;                  ///< set when the parent killed it
};

/// Applies one record of the child to `results`.
void absorb(const std::string &line, const std::vector<Step> &steps,
            std::vector<StepResult> &results, Child &child) {
  if (line == "I") {
    child.ready = true;
    child.since = Clock::now();
    return;
  }
  char kind = line.empty() ? '?' : line[0];
  char *rest = nullptr;
  unsigned long i =
      std::strtoul(line.c_str() + std::min<size_t>(line.size(), 2), &rest, 10);
  if (i >= steps.size() || !rest) {
    std::fprintf(stderr, "bench: unreadable record from a child: %s\n",
                 line.c_str());
    return;
  }
  std::string text = *rest == ' ' ? std::string(rest + 1) : std::string(rest);
  switch (kind) {
  case 'S':
    child.current = long(i);
    child.since = Clock::now();
    break;
  case 'R': {
    Row row;
    if (decodeRow(text, row)) {
      std::fprintf(stderr, "bench:   %s\n", formatRow(row).c_str());
      results[i].rows.push_back(row);
    }
    break;
  }
  case 'L':
    results[i].lines.push_back(text);
    break;
  case 'E':
    std::fprintf(stderr, "bench: [%lu/%zu] %s: %.1f s\n", i + 1, steps.size(),
                 steps[i].label.c_str(), secondsSince(child.since));
    child.current = -1;
    child.next = i + 1;
    child.since = Clock::now();
    break;
  default:
    std::fprintf(stderr, "bench: unreadable record from a child: %s\n",
                 line.c_str());
  }
}

/// Reads the child's records until it closes the pipe or outlasts a limit
/// (then kills it).
void follow(pid_t pid, int fd, const std::vector<Step> &steps,
            std::vector<StepResult> &results, const StepLimits &limits,
            Child &child) {
  std::string buffer;
  char chunk[4096];
  for (;;) {
    double limit = child.ready ? limits.step : limits.setup;
    double left = limit - secondsSince(child.since);
    if (left <= 0) {
      kill(pid, SIGKILL);
      char why[64];
      std::snprintf(why, sizeof(why), "timed out after %.0f s", limit);
      child.killedWhy = why;
      return;
    }
    pollfd p{fd, POLLIN, 0};
    int ready = poll(&p, 1, int(left * 1000) + 1);
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready == 0)
      continue;
    ssize_t n = read(fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return;
    buffer.append(chunk, size_t(n));
    for (size_t end; (end = buffer.find('\n')) != std::string::npos;) {
      absorb(buffer.substr(0, end), steps, results, child);
      buffer.erase(0, end + 1);
    }
  }
}
} // namespace

std::vector<StepResult> runSteps(const std::vector<Step> &steps,
                                 const std::function<void()> &setup,
                                 const StepLimits &limits) {
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(limits.total));
  std::vector<StepResult> results(steps.size());
  auto failRest = [&](size_t from, const std::string &why) {
    for (size_t i = from; i < steps.size(); ++i)
      results[i].failure = why;
  };
  size_t next = 0;
  while (next < steps.size()) {
    if (Clock::now() >= deadline) {
      failRest(next, "not run: the benchmark's limit of " +
                         std::to_string(int(limits.total)) + " s was reached");
      break;
    }
    // Nothing buffered may be written twice, by the parent and the child.
    std::fflush(stdout);
    std::fflush(stderr);
    int fds[2];
    if (pipe(fds) != 0) {
      failRest(next, std::string("not run: pipe: ") + std::strerror(errno));
      break;
    }
    pid_t pid = fork();
    if (pid < 0) {
      close(fds[0]);
      close(fds[1]);
      failRest(next, std::string("not run: fork: ") + std::strerror(errno));
      break;
    }
    if (pid == 0) {
      close(fds[0]);
      runChild(steps, results, next, setup, deadline, fds[1]);
    }
    close(fds[1]);
    Child child;
    child.next = next;
    follow(pid, fds[0], steps, results, limits, child);
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    std::string why =
        child.killedWhy.empty() ? describeStatus(status) : child.killedWhy;
    next = child.next;
    if (!child.ready) {
      failRest(next, "the child process failed in its setup: " + why);
      break;
    }
    bool clean = child.killedWhy.empty() && WIFEXITED(status) &&
                 WEXITSTATUS(status) == 0;
    if (child.current >= 0 || (!clean && next < steps.size())) {
      // The step it was in (or about to start) is the one that failed.
      size_t failed = child.current >= 0 ? size_t(child.current) : next;
      results[failed].rows.clear();
      results[failed].lines.clear();
      results[failed].failure = why;
      std::fprintf(stderr, "bench: [%zu/%zu] %s: FAILED: %s\n", failed + 1,
                   steps.size(), steps[failed].label.c_str(), why.c_str());
      next = failed + 1;
    }
  }
  return results;
}
