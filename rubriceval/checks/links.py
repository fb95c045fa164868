"""required_link: the answer gives the right link, on an allowed domain, and not an invented one."""
from __future__ import annotations

import re
from urllib.parse import urlparse

from rubriceval.checks.base import reworded
from rubriceval.core.verdict import Evidence
from rubriceval.data.sample import Sample
from rubriceval.i18n import msg
from rubriceval.rubric.schema import RequiredLink

# Stop at whitespace, CJK punctuation, quotes and brackets: answers often write "链接：https://x/y。"
URL_RE = re.compile(r"https?://[^\s<>\"'，。；！？、）】》」\)\]]+", re.IGNORECASE)


def find_links(text: str) -> list[tuple[int, str]]:
    return [(m.start(), m.group(0).rstrip(".,;:!?")) for m in URL_RE.finditer(text)]


def _domain_allowed(url: str, allowed: list[str]) -> bool:
    host = (urlparse(url).hostname or "").lower()
    return any(host == d.lower() or host.endswith("." + d.lower()) for d in allowed)


def required_link(item: RequiredLink, sample: Sample) -> Evidence:
    links = find_links(sample.answer)
    if item.url:
        matches = [(p, u) for p, u in links if u.rstrip("/") == item.url.rstrip("/")]
        wanted, described = item.url, msg("ev_link_wanted_url", url=item.url)
    elif item.url_pattern:
        matches = [(p, u) for p, u in links if re.fullmatch(item.url_pattern, u) or re.match(item.url_pattern, u)]
        wanted, described = item.url_pattern, msg("ev_link_wanted_pattern", pattern=item.url_pattern)
    else:
        matches, wanted, described = links, "any link", msg("ev_link_wanted_any")
    problems = [] if matches else [msg("ev_link_missing", wanted=described)]
    off_domain = [u for _, u in links if item.allowed_domains and not _domain_allowed(u, item.allowed_domains)]
    if off_domain:
        problems.append(msg("ev_link_off_domain", domains=item.allowed_domains, links=off_domain))
    context_text = "\n".join(sample.contexts + sample.reference_contexts + [sample.ground_truth])
    invented = [u for _, u in links if item.flag_invented and u not in context_text]
    note = msg("ev_link_invented", links=invented)
    if invented and item.fail_on_invented:
        problems.append(note)
    passed = not problems
    parts = problems or [msg("ev_link_found", url=matches[0][1])]
    if invented and not item.fail_on_invented:
        parts.append(msg("ev_note", text=note))
    first = matches[0] if matches else None
    return Evidence(item=item.id, passed=passed, **reworded(sample, msg("ev_clauses", parts=parts)),
                    span=first[1] if first else None, start=first[0] if first else None,
                    missing=[wanted] if not matches else [])
