"""required_link: the answer gives the right link, on an allowed domain, and not an invented one."""
from __future__ import annotations

import re
from urllib.parse import urlparse

from rubriceval.data.sample import Sample
from rubriceval.rubric.schema import RequiredLink
from rubriceval.verdict import Evidence

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
        wanted = item.url
    elif item.url_pattern:
        matches = [(p, u) for p, u in links if re.fullmatch(item.url_pattern, u) or re.match(item.url_pattern, u)]
        wanted = f"a link matching /{item.url_pattern}/"
    else:
        matches, wanted = links, "any link"
    problems: list[str] = []
    if not matches:
        problems.append(f"missing {wanted}")
    off_domain = [u for _, u in links if item.allowed_domains and not _domain_allowed(u, item.allowed_domains)]
    if off_domain:
        problems.append(f"link(s) outside allowed domains {item.allowed_domains}: {', '.join(off_domain)}")
    context_text = "\n".join(sample.contexts + sample.reference_contexts + [sample.ground_truth])
    invented = [u for _, u in links if item.flag_invented and u not in context_text]
    if invented:
        note = f"possibly invented (in no context): {', '.join(invented)}"
        if item.fail_on_invented:
            problems.append(note)
    passed = not problems
    detail = "; ".join(problems) if problems else f"found {matches[0][1]}"
    if invented and not item.fail_on_invented:
        detail += f"; note: {note}"
    first = matches[0] if matches else None
    return Evidence(item=item.id, passed=passed, detail=detail, span=first[1] if first else None,
                    start=first[0] if first else None, missing=[wanted] if not matches else [])
