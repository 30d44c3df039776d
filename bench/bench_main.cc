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

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
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
    static std::map<std::string, size_t> peer_rep; // which of the peer's runs is next
    bench_machine_mark mark;
    bench_machine_begin(&mark);
    for (auto _ : state) {
        if (c->kind == BENCH_PEER) {
            state.SetIterationTime(bench_peer_seconds(p, peer_rep[c->name]++));
            continue;
        }
        if (bench_run(p, &err) != SEBT_OK) {
            state.SkipWithError(("run failed: " + std::string(err.msg)).c_str());
            return;
        }
    }
    double others_busy, load_avg;
    bench_machine_end(&mark, &others_busy, &load_avg);
    if (c->kind == BENCH_PEER)
        bench_peer_machine(p, &others_busy, &load_avg);
    // Machine noise per repetition: the report flags points measured while
    // other processes held the CPUs.
    state.counters["machine_others_busy"] = others_busy;
    state.counters["machine_load_avg"] = load_avg;
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
    bool have_reps = false, have_min_time = false, have_interleave = false;
    std::vector<char *> args;
    for (int i = 0; i < argc; i++) {
        if (std::strcmp(argv[i], "--quick") == 0) {
            quick = true;
            continue;
        }
        have_reps |= std::strncmp(argv[i], "--benchmark_repetitions", 23) == 0;
        have_min_time |= std::strncmp(argv[i], "--benchmark_min_time", 20) == 0;
        have_interleave |= std::strncmp(argv[i], "--benchmark_enable_random_interleaving", 38) == 0;
        args.push_back(argv[i]);
    }
    const char *env_quick = std::getenv("SEBT_BENCH_QUICK");
    if (env_quick && *env_quick && std::strcmp(env_quick, "0") != 0)
        quick = true;
    // Repetitions and the minimum time go in as flags, not per benchmark:
    // then Google Benchmark leaves them out of the names, which stay the same
    // in --quick and full runs (compare.py and the baseline gate match names).
    // Interleaving the repetitions at random spreads a burst of load over
    // every benchmark instead of all of one.
    int reps = bench_default_repetitions(quick);
    static char reps_flag[64], min_time_flag[64], interleave_flag[] = "--benchmark_enable_random_interleaving=true";
    std::snprintf(reps_flag, sizeof reps_flag, "--benchmark_repetitions=%d", reps);
    std::snprintf(min_time_flag, sizeof min_time_flag, "--benchmark_min_time=%g", bench_min_time(quick));
    if (!have_reps)
        args.insert(args.begin() + 1, reps_flag);
    if (!have_min_time)
        args.insert(args.begin() + 1, min_time_flag);
    if (!have_interleave)
        args.insert(args.begin() + 1, interleave_flag);
    for (char *a : args)
        if (std::strncmp(a, "--benchmark_repetitions=", 24) == 0)
            reps = std::atoi(a + 24);
    bench_set_repetitions(reps);
    int n_args = static_cast<int>(args.size());

    bench_context(
        quick,
        [](const char *key, const char *value, void *) { benchmark::AddCustomContext(key, value); },
        nullptr);
    benchmark::AddCustomContext("sebt_cxx_compiler", "g++ " __VERSION__);
    benchmark::AddCustomContext("sebt_repetitions", std::to_string(reps));

    int n_cpus = static_cast<int>(std::thread::hardware_concurrency());
    std::vector<bench_case> cases(bench_plan(quick, n_cpus, nullptr, 0));
    bench_plan(quick, n_cpus, cases.data(), cases.size());
    for (const bench_case &c : cases) {
        const bench_case *cp = &c;
        auto *b = benchmark::RegisterBenchmark(c.name, [cp](benchmark::State &s) { run_case(s, cp); });
        b->Unit(benchmark::kMillisecond);
        if (c.kind == BENCH_PEER)
            b->UseManualTime()->Iterations(1); // one of the peer's own timed sweeps per repetition
        else
            b->UseRealTime();
    }

    benchmark::Initialize(&n_args, args.data());
    if (benchmark::ReportUnrecognizedArguments(n_args, args.data()))
        return 2;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    bench_release_all();
    return 0;
}
