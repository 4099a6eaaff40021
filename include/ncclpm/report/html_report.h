// include/ncclpm/report/html_report.h
//
// The postmortem as one self-contained HTML file: findings, a per-rank
// timeline, the collective alignment and a host table. CSS, script and data
// are inline; nothing is fetched when it opens (a mail attachment, a ticket).
// The findings and the host table are plain HTML, readable and printable
// without script; the timeline and the alignment are drawn by the inline
// script as SVG.
#pragma once

#include <string>

#include "ncclpm/diagnose/finding.h"
#include "ncclpm/report/report.h"
#include "ncclpm/report/timeline.h"

namespace ncclpm::report {

std::string render_html(const diagnose::Diagnosis& d, const Timeline& t, const RenderOptions& o);

/// `s` with & < > " ' written as entities.
std::string html_escape(std::string_view s);

}  // namespace ncclpm::report
