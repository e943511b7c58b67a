#include "core/run/study/ReadyStudies.h"

#include "core/common/Error.h"

#include <algorithm>

namespace sgdscope {

namespace {

/// Every ready-made study trains the blobs preset (64 features, 10 classes, a 64-256-256-10 MLP with momentum
/// 0.9) on the simulated datacenter: real learning at a cost a laptop can afford for a few hundred runs, timed
/// in virtual seconds (deterministic: the same figure on any machine). The time to a training loss of 0.005 is
/// measured at every update (--eval-every 1; evaluations are not counted in a mode's clock): about 16 updates of
/// sync at its best lr (0.4). A target of 0.98 test accuracy, reached in two updates at any lr from 0.1, drew
/// nothing but the cost of two rounds of communication, and its best lr sat at the top of the grid.
/// The lr grid 0.1 ... 1.6 brackets every mode's best from 1 to 64 workers (0.2 to 0.8 were kept).
const StudySpec::Options blobsToTarget {{"preset", "blobs"}, {"engine", "sim"}, {"cluster", "datacenter"},
    {"batch", "1024"}, {"eval-every", "1"}, {"target-loss", "0.005"}};

std::vector<ReadyStudy> makeStudies()
{
    std::vector<ReadyStudy> s;
    {
        ReadyStudy r;
        r.name = "scaling";
        r.figure = "time to a training loss of 0.005 against workers (1 to 1,024, a global batch of 1,024), sync, "
                   "async and local SGD each at its own best learning rate (Chen et al. 2016, fig. 4; Lin et al. "
                   "2018)";
        r.flags = {{"sweep", "workers=1..1024"}, {"sweep", "mode=sync,async,local-sgd"}, {"best-of", "lr=0.1..1.6x2"},
            {"halving", "3"}};
        r.options = blobsToTarget;
        r.options.emplace_back("epochs", "8");
        s.push_back(r);
    }
    {
        ReadyStudy r;
        r.name = "stragglers";
        r.figure = "time to a training loss of 0.005 against the share of 4x slower workers (none to 0.3) at 64 "
                   "workers: sync, backup workers (6 of 64) and SSP (bound 3), each at its own best learning rate, "
                   "two seeds, on the ideal cluster (compute-bound, as Chen et al. 2016's training; Ho et al. 2013)";
        r.flags = {{"sweep", "slow-fraction=none,0.05:4,0.1:4,0.2:4,0.3:4"}, {"sweep", "mode=sync,backup,ssp"},
            {"best-of", "lr=0.1..1.6x2"}, {"halving", "2"}, {"seeds", "2"}};
        r.options = blobsToTarget;
        // The ideal cluster, not blobsToTarget's datacenter: there, at this size, the parameter server's link decides
        // and hides every straggler (sync ran 29,154 samples/s with no slow worker and with 30% of them 4x slower).
        for (auto& option : r.options)
            if (option.first == "cluster")
                option.second = "ideal";
        r.options.insert(r.options.end(), {{"workers", "64"}, {"epochs", "8"}, {"backup-workers", "6"}});
        s.push_back(r);
    }
    {
        ReadyStudy r;
        r.name = "staleness";
        r.figure = "async's mean staleness and final loss against workers (1 to 256) at one learning rate, three "
                   "seeds, a push's step lr x b / B (the default) against lr (constant): staleness grows as P - 1 "
                   "either way; the loss stays only where the step shrinks with it (Dean et al. 2012; Zhang et al. "
                   "2016)";
        r.flags = {{"sweep", "workers=1..256"}, {"sweep", "async-lr=scaled,constant"}, {"seeds", "3"}};
        r.options = {{"preset", "blobs"}, {"engine", "sim"}, {"cluster", "datacenter"}, {"mode", "async"},
            {"batch", "1024"}, {"lr", "0.01"}, {"epochs", "4"}};
        s.push_back(r);
    }
    return s;
}

std::string axisOf(const std::string& sweep)
{
    return sweep.substr(0, sweep.find('='));
}

} // namespace

const std::vector<ReadyStudy>& readyStudies()
{
    static const std::vector<ReadyStudy> studies = makeStudies();
    return studies;
}

void applyReadyStudy(StudySpec::Options& flags, StudySpec::Options& options)
{
    const auto ready = std::find_if(flags.begin(), flags.end(), [](const auto& f) { return f.first == "ready"; });
    if (ready == flags.end())
        return;
    const std::string name = ready->second;
    const auto study = std::find_if(
        readyStudies().begin(), readyStudies().end(), [&](const ReadyStudy& r) { return r.name == name; });
    if (study == readyStudies().end()) {
        std::string names;
        for (const ReadyStudy& r : readyStudies())
            names += (names.empty() ? "" : " | ") + r.name;
        throw SgdError("--ready: '" + name.substr(0, 40) + "' is not a ready-made study; use " + names);
    }
    flags.erase(ready);
    StudySpec::Options merged;
    // (named copies, not structured bindings: clang 14 cannot capture those in a lambda)
    for (const auto& entry : study->flags) {
        const std::string& flag = entry.first;
        const std::string& value = entry.second;
        const bool replaced = std::any_of(flags.begin(), flags.end(),
            [&](const auto& f) { return f.first == flag && (flag != "sweep" || axisOf(f.second) == axisOf(value)); });
        if (!replaced)
            merged.emplace_back(flag, value);
    }
    merged.insert(merged.end(), flags.begin(), flags.end());
    flags = merged;
    StudySpec::Options shared;
    for (const auto& entry : study->options) {
        const std::string& name2 = entry.first;
        const std::string& value = entry.second;
        const bool given = std::any_of(options.begin(), options.end(), [&](const auto& o) { return o.first == name2; });
        // (the command line's sweep of an option replaces the ready study's value of it too)
        const bool swept = std::any_of(flags.begin(), flags.end(),
            [&](const auto& f) { return (f.first == "sweep" || f.first == "best-of") && axisOf(f.second) == name2; });
        if (!given && !swept)
            shared.emplace_back(name2, value);
    }
    shared.insert(shared.end(), options.begin(), options.end());
    options = shared;
}

} // namespace sgdscope
