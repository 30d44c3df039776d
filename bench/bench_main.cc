// The Google Benchmark program: a thin shim over bench_cases.h, the only C++
// in sebt. It registers the cases of the plan, times bench_run() and turns
// the work done into rate counters. Everything else is C.
//
//   sebt_bench [--quick] [--benchmark_out=FILE --benchmark_out_format=json] ...
//
// A case whose sampled combos diverge from the oracle is not timed: it ends
// with the error "parity failed: ...", so no speed is reported for it. A
// backend that cannot run here ends with "unavailable: ...".
#include <benchmark/benchmark.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench_cases.h"

namespace {

void run_case(benchmark::State &state, const bench_case *c)
{
    sebt_error err = {};
    bench_prepared *p = nullptr;
    if (bench_prepare(c, &p, &err) != SEBT_OK) {
        state.SkipWithError(("unavailable: " + std::string(err.msg)).c_str());
        return;
    }
    const bench_parity *parity = bench_parity_of(p);
    if (parity->status == BENCH_PARITY_FAILED) {
        state.SkipWithError(("parity failed: " + std::string(parity->msg)).c_str());
        return;
    }
    for (auto _ : state) {
        if (bench_run(p, &err) != SEBT_OK) {
            state.SkipWithError(("run failed: " + std::string(err.msg)).c_str());
            return;
        }
    }
    const bench_work w = bench_work_of(p);
    using benchmark::Counter;
    if (w.rows > 0) {
        state.counters["rows_per_second"] = Counter(w.rows, Counter::kIsIterationInvariantRate);
    } else {
        state.counters["bars_per_second"] = Counter(w.bars, Counter::kIsIterationInvariantRate);
        state.counters["combos_per_second"] = Counter(w.combos, Counter::kIsIterationInvariantRate);
        state.counters["bar_combos_per_second"] = Counter(w.bar_combos, Counter::kIsIterationInvariantRate);
    }
    if (c->kind == BENCH_BACKTEST)
        state.counters["trades_per_second"] = Counter(w.trades, Counter::kIsIterationInvariantRate);
    if (parity->status == BENCH_PARITY_NONE)
        return;
    state.counters["parity_checked"] = static_cast<double>(parity->checked);
    state.counters["parity_ties"] = static_cast<double>(parity->ties);
    const char *status = parity->status == BENCH_PARITY_OK ? "parity ok: " : "parity oracle: ";
    state.SetLabel((status + std::string(parity->msg)).c_str());
}

} // namespace

int main(int argc, char **argv)
{
    // --quick is ours: take it out before Google Benchmark sees the flags.
    bool quick = false;
    std::vector<char *> args;
    for (int i = 0; i < argc; i++) {
        if (std::strcmp(argv[i], "--quick") == 0)
            quick = true;
        else
            args.push_back(argv[i]);
    }
    const char *env_quick = std::getenv("SEBT_BENCH_QUICK");
    if (env_quick && *env_quick && std::strcmp(env_quick, "0") != 0)
        quick = true;
    int n_args = static_cast<int>(args.size());

    bench_context(
        quick,
        [](const char *key, const char *value, void *) { benchmark::AddCustomContext(key, value); },
        nullptr);
    benchmark::AddCustomContext("sebt_cxx_compiler", "g++ " __VERSION__);

    int n_cpus = static_cast<int>(std::thread::hardware_concurrency());
    std::vector<bench_case> cases(bench_plan(quick, n_cpus, nullptr, 0));
    bench_plan(quick, n_cpus, cases.data(), cases.size());
    for (const bench_case &c : cases) {
        const bench_case *cp = &c;
        benchmark::RegisterBenchmark(c.name, [cp](benchmark::State &s) { run_case(s, cp); })
            ->MinTime(c.min_time)
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
    }

    benchmark::Initialize(&n_args, args.data());
    if (benchmark::ReportUnrecognizedArguments(n_args, args.data()))
        return 2;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    bench_release_all();
    return 0;
}
