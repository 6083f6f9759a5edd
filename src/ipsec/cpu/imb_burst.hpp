// src/ipsec/cpu/imb_burst.hpp: one filled burst of intel-ipsec-mb jobs through to completion,
// as cpu.esp and cpu.ctr submit them.
#pragma once
#include <intel-ipsec-mb.h>

#include <string>

#include "warpath/core/status.hpp"

namespace warpath::ipsec::detail {

/// Flushes whatever the manager still holds (after a failure nothing of a call may be left to
/// write into the caller's buffers later).
inline void imb_drain(IMB_MGR* m) {
  IMB_JOB* jobs[IMB_MAX_BURST_SIZE];
  while (IMB_FLUSH_BURST(m, IMB_MAX_BURST_SIZE, jobs) > 0) {
  }
}

/// Submits the n filled jobs (without the library's checks when `shaped`: the caller vouches
/// for every field) and flushes until all completed; kInvalidArgument naming `who` when the
/// library refuses the burst, does not complete it, or a job did not complete.
inline Status imb_complete_burst(IMB_MGR* m, IMB_JOB** jobs, uint32_t n, bool shaped,
                                 const char* who) {
  uint32_t done = shaped ? IMB_SUBMIT_BURST_NOCHECK(m, n, jobs) : IMB_SUBMIT_BURST(m, n, jobs);
  if (done == 0 && imb_get_errno(m) != 0) {
    imb_drain(m);
    return Status(Errc::kInvalidArgument,
                  std::string(who) + ": intel-ipsec-mb: " + imb_get_strerror(imb_get_errno(m)));
  }
  while (done < n) {
    const uint32_t more = IMB_FLUSH_BURST(m, n - done, jobs + done);
    if (more == 0) {
      imb_drain(m);
      return Status(Errc::kInvalidArgument, std::string(who) + ": burst did not complete");
    }
    done += more;
  }
  for (uint32_t k = 0; k < n; ++k)
    if (jobs[k]->status != IMB_STATUS_COMPLETED)
      return Status(Errc::kInvalidArgument, std::string(who) + ": job failed with status " +
                                                std::to_string(int(jobs[k]->status)));
  return Status::ok();
}

}  // namespace warpath::ipsec::detail
