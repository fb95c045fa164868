"""Built-in entities a conversation check can look for instead of phrases (`entity: [order_number, money]`):

    order_number     a long number/code right after 订单号 / 订单 / 单号 / order (no.) — 订单号 13800138000 is an
                     order number, not a phone
    tracking_number  a code after 快递单号 / 运单号 / 物流单号 / tracking / waybill, or a carrier-prefixed one (SF…,
                     JD…, YT…, JT…)
    money            ¥299 / ￥299 / RMB 299 / 299 元 / 299元 / 50块钱 / 五十元 / $20 / 20 yuan — not 元旦, not 3块肥皂
    address          the street address detector of rubriceval/safety/pii.py
    phone            mobile and landline numbers (pii.py; 400/800/95xxx service lines are not a person's phone)
    id_card          身份证 numbers with a valid date and check digit (pii.py)
    bank_card        16–19 digits passing the Luhn check (pii.py)
    email            local@domain.tld (pii.py)
    date_time        a date or time commitment: 12月3日 / 2026-12-03 / 明天 / 下周一 / 周五前 / 17 号前 / 3个工作日内 /
                     24小时内 / 下午 2 点 / 5 点前 / tomorrow / by Friday / within 3 business days
    url              http(s):// links and www. addresses

Matching runs on the folded view (full-width digits and letters count), spans quote the original text. Each name
has Chinese aliases (订单号, 物流单号, 金额, 地址, 手机号, 身份证, 银行卡, 邮箱, 时间承诺, 链接).
"""
from __future__ import annotations

import re
from typing import Literal, NamedTuple, get_args

from rubriceval.safety.folding import fold
from rubriceval.safety.pii import find_pii

EntityName = Literal["order_number", "tracking_number", "money", "address", "phone", "id_card", "bank_card",
                     "email", "date_time", "url"]
ENTITY_NAMES: tuple[str, ...] = get_args(EntityName)
ALIASES: dict[str, str] = {
    "订单号": "order_number", "订单编号": "order_number", "物流单号": "tracking_number", "快递单号": "tracking_number",
    "运单号": "tracking_number", "金额": "money", "地址": "address", "收货地址": "address", "手机号": "phone",
    "电话": "phone", "身份证": "id_card", "身份证号": "id_card", "银行卡": "bank_card", "银行卡号": "bank_card",
    "邮箱": "email", "时间承诺": "date_time", "日期": "date_time", "时间": "date_time", "链接": "url", "网址": "url",
}
PII_KINDS = {"手机号": "phone", "电话": "phone", "身份证": "id_card", "银行卡": "bank_card", "邮箱": "email",
             "地址": "address"}


class EntitySpan(NamedTuple):
    entity: str      # canonical name
    start: int       # offsets in the original text
    end: int
    text: str


def canonical_entity(name: str) -> str:
    """The canonical name of an entity or one of its aliases; ValueError naming the choices otherwise."""
    key = name.strip()
    if key in ENTITY_NAMES:
        return key
    if key in ALIASES:
        return ALIASES[key]
    raise ValueError(f"unknown entity {name!r}: use one of {', '.join(ENTITY_NAMES)} "
                     f"(or {', '.join(ALIASES)})")


_CODE = r"[a-z]{0,4}[-]?\d[\d\-]{5,23}\d"
# "订单" but not "订单状态": the code must follow within a few characters (是 / 号 / ： / space).
_ORDER = re.compile(r"(?:订单编号|订单号码?|订单|(?<!快递)(?<!运)(?<!物流)单号|order(?:\s*(?:number|no\.?|id|#))?)"
                    r"[\s:：#为是]{0,3}(?:号[\s:：]?)?(" + _CODE + r")(?![\da-z])")
_TRACKING = re.compile(r"(?:快递单号|运单号码?|物流单号|快递号|运单|tracking(?:\s*(?:number|no\.?|#))?|waybill)"
                       r"[\s:：#为是]{0,3}(" + r"[a-z]{0,4}\d{8,20}" + r")(?![\da-z])"
                       r"|(?<![\da-z])((?:sf|jd[a-z]?|yt|jt|zto|sto|yd)\d{10,15})(?![\da-z])")
_CN_NUM = r"[零〇一二两三四五六七八九十百千万]+"
_MONEY = re.compile(
    r"(?:¥|rmb|cny|人民币|\$|usd|us\$)\s?\d+(?:,\d{3})*(?:\.\d{1,2})?"
    r"|(?<![\d.])\d+(?:,\d{3})*(?:\.\d{1,2})?\s?(?:元|圆)(?![旦宵素气老件器])"
    r"|(?<![\d.])\d+(?:,\d{3})*(?:\.\d{1,2})?\s?块(?:钱|(?![\u4e00-\u9fff]))"
    r"|" + _CN_NUM + r"(?:元|块钱)(?![旦宵素气老件器])"
    r"|(?<![\d.])\d+(?:,\d{3})*(?:\.\d{1,2})?\s?(?:yuan|rmb|dollars?|usd)\b")
_WEEKDAY = r"(?:周|星期|礼拜)[一二三四五六日天]"
_DATE_TIME = re.compile(
    r"\d{4}[-/.年]\d{1,2}[-/.月]\d{1,2}日?"
    r"|\d{1,2}月\d{1,2}[日号]"
    r"|(?<![\d/])\d{1,2}/\d{1,2}(?![\d/])"
    r"|(?:今天|今日|明天|明日|后天|大后天|今晚|明早|明晚|本周|这周|下周|下个?月|月底|月初|周末)"
    r"[一二三四五六日天]?(?:之前|以前|前|内|之内)?"
    r"|(?:下|本|这)?" + _WEEKDAY + r"(?:之前|以前|前)?"
    r"|(?:\d+|[一二两三四五六七八九十]+)\s?(?:个)?\s?(?:工作日|自然日|天|日|小时|分钟|周|星期|个月)(?:之内|以内|内|之后|后)"
    r"|(?:\d{1,2}[:：]\d{2}|\d{1,2}\s?点(?:半|\s?\d{1,2}\s?分)?)\s?(?:之前|以前|前)"
    r"|(?:上午|下午|中午|晚上|早上|傍晚|凌晨)\s?\d{1,2}(?:[:：]\d{2}|\s?点)"
    r"|(?<![\d.])\d{1,2}\s?[号日]\s?(?:之前|以前|前)"
    r"|\b(?:today|tonight|tomorrow|the day after tomorrow|next (?:week|month|monday|tuesday|wednesday|thursday|friday"
    r"|saturday|sunday)|by (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|tonight|the end of"
    r" (?:the )?(?:day|week|month)))\b"
    r"|\bwithin \d+ (?:business |working )?(?:days?|hours?|minutes?|weeks?)\b"
    r"|\bin \d+ (?:business |working )?(?:days?|hours?)\b")
_URL = re.compile(r"https?://[^\s<>\"'，。；！？、）】》」)\]]+|(?<![\w.@])www\.[a-z0-9-]+(?:\.[a-z0-9-]+)+[^\s<>\"'，。；！？、）】》」)\]]*")


def _matches(pattern: re.Pattern, view: str, entity: str) -> list[tuple[str, int, int]]:
    found = []
    for match in pattern.finditer(view):
        group = next((g for g in range(1, (pattern.groups or 0) + 1) if match.group(g)), 0)
        start, end = match.span(group)
        found.append((entity, start, end))
    return found


def find_entities(text: str, wanted: list[str] | tuple[str, ...] = ENTITY_NAMES) -> list[EntitySpan]:
    """Spans of the wanted entities in `text`, in order of position (an entity found inside another is kept once:
    order and tracking numbers win over the personal-data kinds inside them)."""
    if not text:
        return []
    kinds = {canonical_entity(w) for w in wanted}
    view = fold(text)
    candidates: list[tuple[str, int, int]] = []
    patterns = {"order_number": _ORDER, "tracking_number": _TRACKING, "money": _MONEY, "date_time": _DATE_TIME,
                "url": _URL}
    for entity in ("tracking_number", "order_number", "url", "money", "date_time"):
        candidates += _matches(patterns[entity], view.text, entity)
    for span in find_pii(text):
        candidates.append((PII_KINDS[span.kind], *_view_span(view, span.start, span.end)))
    taken: list[tuple[int, int]] = []
    spans: list[EntitySpan] = []
    for entity, lo, hi in candidates:            # earlier candidates win an overlap
        if any(lo < t_hi and t_lo < hi for t_lo, t_hi in taken):
            continue
        taken.append((lo, hi))
        if entity in kinds:
            start, end = view.span(lo, hi)
            spans.append(EntitySpan(entity, start, end, text[start:end]))
    return sorted(spans, key=lambda s: s.start)


def _view_span(view, start: int, end: int) -> tuple[int, int]:
    """Original offsets → view offsets (pii spans are in the original text)."""
    positions = [i for i, origin in enumerate(view.origin) if start <= origin < end]
    return (positions[0], positions[-1] + 1) if positions else (0, 0)
