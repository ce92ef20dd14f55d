// tools/ascendc_check/run.py --run: the GM coverage check of a launch (gm_coverage.h).
#include "gm_coverage.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>

namespace ascendc_check {

namespace {

struct Interval {
    uint64_t begin;  // bytes into the tensor
    uint64_t end;
    uint32_t block;
};

const char* Verb(uint8_t access) { return access == kWrite ? "written" : "read"; }

class Report {
public:
    explicit Report(size_t limit) : limit_(limit) {}
    template <class... Args>
    void Add(const char* fmt, Args... args)
    {
        if (lines_.size() < limit_) {
            char line[512];
            std::snprintf(line, sizeof line, fmt, args...);
            lines_.emplace_back(line);
        }
        ++count_;
    }
    std::vector<std::string> Take()
    {
        if (count_ > lines_.size()) {
            lines_.push_back("... and " + std::to_string(count_ - lines_.size()) + " more");
        }
        return std::move(lines_);
    }

private:
    size_t limit_;
    size_t count_ = 0;
    std::vector<std::string> lines_;
};

unsigned long long Ull(uint64_t v) { return static_cast<unsigned long long>(v); }

}  // namespace

std::vector<std::string> CheckGmCopies(const GmExpectation& expected, const std::vector<GmCopy>& copies,
                                       size_t maxMessages)
{
    Report report(maxMessages);
    const std::vector<GmTensor>& tensors = expected.tensors;
    // Tensors with bytes, by address: a copy must lie inside one of them.
    std::vector<size_t> byBase;
    for (size_t t = 0; t < tensors.size(); ++t) {
        if (tensors[t].bytes > 0) {
            byBase.push_back(t);
        }
    }
    std::sort(byBase.begin(), byBase.end(), [&](size_t a, size_t b) { return tensors[a].base < tensors[b].base; });
    // Moved bytes per (tensor, access).
    std::vector<std::vector<Interval>> moved[2] = {std::vector<std::vector<Interval>>(tensors.size()),
                                                   std::vector<std::vector<Interval>>(tensors.size())};

    for (const GmCopy& c : copies) {
        const uint8_t access = c.toGm ? kWrite : kRead;
        if (c.bursts == 0 || c.gm == 0 || c.burstBytes == 0) {
            report.Add("block %u: %s moved nothing or with arguments the trace does not decode (%llu x %llu B at %#llx)",
                       c.block, c.intrinsic, Ull(c.bursts), Ull(c.burstBytes), Ull(c.gm));
            continue;
        }
        for (uint64_t b = 0; b < c.bursts; ++b) {
            const uint64_t addr = c.gm + b * (c.burstBytes + c.gapBytes);
            const auto after = std::upper_bound(byBase.begin(), byBase.end(), addr,
                                                [&](uint64_t a, size_t t) { return a < tensors[t].base; });
            const GmTensor* t = after == byBase.begin() ? nullptr : &tensors[*(after - 1)];
            if (t == nullptr || addr >= t->base + t->bytes) {
                report.Add("block %u: %s %s %llu B at %#llx, outside every tensor of the launch", c.block,
                           c.intrinsic, c.toGm ? "wrote" : "read", Ull(c.burstBytes), Ull(addr));
                continue;
            }
            const uint64_t offset = addr - t->base;
            const uint64_t elem = t->elemBytes;
            if (offset + c.burstBytes > t->bytes) {
                report.Add("block %u: %s %s %s[%u] elements [%llu, %llu), past its end (%llu elements)", c.block,
                           c.intrinsic, c.toGm ? "wrote" : "read", t->list.c_str(), t->index, Ull(offset / elem),
                           Ull((offset + c.burstBytes) / elem), Ull(t->bytes / elem));
                continue;
            }
            if ((t->expected & access) == 0) {
                report.Add("block %u: %s %s %s[%u], which the kernel must never have %s", c.block, c.intrinsic,
                           c.toGm ? "wrote" : "read", t->list.c_str(), t->index, Verb(access));
                continue;
            }
            if ((c.elemBytes != 0 && c.elemBytes != elem) || offset % elem != 0 || c.burstBytes % elem != 0) {
                report.Add("block %u: %s moved %u-byte elements, %llu B at byte %llu of %s[%u], whose dtype has %llu "
                           "bytes",
                           c.block, c.intrinsic, c.elemBytes, Ull(c.burstBytes), Ull(offset), t->list.c_str(),
                           t->index, Ull(elem));
                continue;
            }
            if (c.burstBytes > expected.maxCopyElems * elem) {
                report.Add("block %u: %s moved %llu elements of %s[%u] at once, more than the chunk (%llu)", c.block,
                           c.intrinsic, Ull(c.burstBytes / elem), t->list.c_str(), t->index,
                           Ull(expected.maxCopyElems));
            }
            moved[access - 1][static_cast<size_t>(t - tensors.data())].push_back(
                {offset, offset + c.burstBytes, c.block});
        }
    }

    // Each expected access covers every byte exactly once.
    for (size_t ti = 0; ti < tensors.size(); ++ti) {
        const GmTensor& t = tensors[ti];
        for (uint8_t access : {kRead, kWrite}) {
            if ((t.expected & access) == 0) {
                continue;
            }
            std::vector<Interval>& iv = moved[access - 1][ti];
            std::sort(iv.begin(), iv.end(), [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
            const uint64_t elem = t.elemBytes;
            uint64_t covered = 0;
            for (const Interval& i : iv) {
                if (i.begin > covered) {
                    report.Add("%s[%u] elements [%llu, %llu) never %s", t.list.c_str(), t.index, Ull(covered / elem),
                               Ull(i.begin / elem), Verb(access));
                } else if (i.begin < covered) {
                    report.Add("%s[%u] elements [%llu, %llu) %s more than once (again by block %u)", t.list.c_str(),
                               t.index, Ull(i.begin / elem), Ull(std::min(covered, i.end) / elem), Verb(access),
                               i.block);
                }
                covered = std::max(covered, i.end);
            }
            if (covered < t.bytes) {
                report.Add("%s[%u] elements [%llu, %llu) never %s", t.list.c_str(), t.index, Ull(covered / elem),
                           Ull(t.bytes / elem), Verb(access));
            }
        }
    }

    // Each block moves exactly its share: per (block, entry) the elements it moved of each expected access.
    std::map<std::pair<uint32_t, uint32_t>, BlockShare> shareOf;
    for (uint32_t block = 0; block < expected.shares.size(); ++block) {
        for (const BlockShare& s : expected.shares[block]) {
            shareOf[{block, s.index}] = s;
        }
    }
    for (size_t ti = 0; ti < tensors.size(); ++ti) {
        const GmTensor& t = tensors[ti];
        for (uint8_t access : {kRead, kWrite}) {
            if ((t.expected & access) == 0) {
                continue;
            }
            std::map<uint32_t, uint64_t> elemsOfBlock;
            for (const Interval& i : moved[access - 1][ti]) {
                const auto s = shareOf.find({i.block, t.index});
                const uint64_t b = i.begin / t.elemBytes;
                const uint64_t e = i.end / t.elemBytes;
                if (s == shareOf.end() || b < s->second.begin || e > s->second.end) {
                    report.Add("block %u %s %s[%u] elements [%llu, %llu), outside its share [%llu, %llu)", i.block,
                               Verb(access), t.list.c_str(), t.index, Ull(b), Ull(e),
                               Ull(s == shareOf.end() ? 0 : s->second.begin), Ull(s == shareOf.end() ? 0 : s->second.end));
                }
                elemsOfBlock[i.block] += e - b;
            }
            for (const auto& [key, s] : shareOf) {
                if (key.second == t.index && elemsOfBlock[key.first] != s.end - s.begin) {
                    report.Add("block %u %s %llu elements of %s[%u], its share is [%llu, %llu)", key.first,
                               Verb(access), Ull(elemsOfBlock[key.first]), t.list.c_str(), t.index, Ull(s.begin),
                               Ull(s.end));
                }
            }
        }
    }
    return report.Take();
}

}  // namespace ascendc_check
