"""Personal data in Chinese customer-service text: mobile and landline numbers, 身份证 numbers, bank cards, e-mail
addresses and street addresses, found with their spans in the original text.

Matching runs on the folded view (full-width digits and `＠` count), and each kind has a validity rule so that the many
long numbers of customer service (order, tracking, invoice numbers) are not taken for personal data:
- 手机号: 1[3-9] + 9 digits, optional +86 / 0086 / (+86), groups split by spaces, dashes or dots;
- 电话 (landline): area code 0xx / 0xxx, 7–8 digits, optional extension (转 / ext / #); 400/800 and 95xxx service
  lines are not personal and are left alone;
- 身份证: 18 digits with a valid birth date and the ISO 7064 MOD 11-2 check character (X or x), or the old 15 digits
  with a valid birth date and 身份证/证件 named just before;
- 银行卡: 16–19 digits (groups of four allowed) passing the Luhn check;
- 邮箱: local@domain.tld;
- 地址: a road (路/街/大道/巷/弄/胡同) with a house number (号), or a residential compound (小区/花园/公寓/大厦…) with a
  building (栋/幢/号楼), extended by the administrative units before it (省/市/区/县/镇/街道) and the building, unit,
  floor and room after it.
A long number right after 订单/单号/运单/快递/物流/编号/编码/order/tracking is an identifier, not personal data.

Not covered: names, birthdays written out, licence plates, free-form descriptions of where someone lives.
"""
from __future__ import annotations

import re
from datetime import date
from typing import Literal

from pydantic import BaseModel

from rubriceval.safety.folding import fold

PiiKind = Literal["手机号", "电话", "身份证", "银行卡", "邮箱", "地址"]


class PiiSpan(BaseModel):
    kind: PiiKind
    start: int        # offsets in the original text
    end: int
    text: str         # as written

    @property
    def key(self) -> str:
        """What makes two spellings the same value: digits (and X) for numbers, lower case for e-mail, the text
        without spaces for addresses."""
        view = fold(self.text).text
        if self.kind in ("手机号", "电话", "身份证", "银行卡"):
            digits = re.sub(r"[^0-9x]", "", view)
            return digits[2:] if self.kind == "手机号" and len(digits) == 13 and digits.startswith("86") else \
                digits[4:] if self.kind == "手机号" and len(digits) == 15 and digits.startswith("0086") else digits
        return re.sub(r"\s+", "", view)


_GAP = r"[ \-.\u00a0]?"
# A number is never a piece of a longer number or of a run of digit groups ("6222 0212 3456 7890 123" holds no
# landline); a separate number after a space ("13700001111 320102…") is its own value.
_NOT_DIGIT_BEFORE = r"(?<![\dA-Za-z])(?<!\d[\-.])(?<!(?<!\d)\d{4} )"
_NOT_DIGIT_AFTER = r"(?![\dA-Za-z])(?![\-.]\d)(?! \d{1,4}(?!\d))"
_IDENTIFIER_CONTEXT = re.compile(r"(?:订单|单号|运单|快递|物流|编号|编码|条形码|代码|号码为?[:：]?\s*#|order|tracking|sku|no\.)"
                                 r"[^\n，。,;；]{0,8}$", re.IGNORECASE)
_SERVICE_LINE = re.compile(r"^(?:400|800|95\d{3}|96\d{3}|10\d{3})")

_MOBILE = re.compile(_NOT_DIGIT_BEFORE + r"(?:(?:\+|00)?86" + _GAP + r"|[(（]\+?86[)）]" + _GAP + r")?"
                     r"1[3-9]\d" + _GAP + r"\d{4}" + _GAP + r"\d{4}" + _NOT_DIGIT_AFTER)
_LANDLINE = re.compile(_NOT_DIGIT_BEFORE + r"(?:[(（]0\d{2,3}[)）]|0\d{2,3})" + r"[ \-]?\d{3,4}[ \-]?\d{4}"
                       r"(?:\s*(?:转|ext\.?|#|-)\s*\d{1,5})?" + _NOT_DIGIT_AFTER)
_ID18 = re.compile(_NOT_DIGIT_BEFORE + r"[1-8]\d{5}\s?(?:19|20)\d{6}\s?\d{3}[\dx]" + _NOT_DIGIT_AFTER)
_ID15 = re.compile(_NOT_DIGIT_BEFORE + r"[1-8]\d{5}\d{6}\d{3}" + _NOT_DIGIT_AFTER)
_CARD = re.compile(_NOT_DIGIT_BEFORE + r"(?:(?:\d{4}[ \-]){3,4}\d{1,4}|\d{16,19})" + _NOT_DIGIT_AFTER)
# ASCII-only boundaries: Chinese characters may touch an address on either side ("邮箱li@qq.com已验证").
_EMAIL = re.compile(r"(?<![a-z0-9._%+-])[a-z0-9][a-z0-9._%+-]*@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}(?![a-z0-9-])")

_CJK = r"[\u4e00-\u9fff]"
_NUM = r"[0-9一二三四五六七八九十百零〇]"
_ADMIN = (r"(?:" + _CJK + r"{2,7}?(?:省|自治区))?(?:" + _CJK + r"{2,6}?(?:市|自治州|州|盟))?"
          r"(?:" + _CJK + r"{1,6}?(?:区|县|旗))?(?:" + _CJK + r"{1,6}?(?:镇|乡|街道))?")
_AFTER_NUMBER = (r"(?:\s?(?:" + _NUM + r"{1,5}|[a-z])\s?(?:号楼|号院|栋|幢|座|单元|楼|层|室|号)|\s?" + _CJK
                 + r"{2,8}?(?:园|中心|大厦|广场)(?=\s?(?:" + _NUM + r"{1,4}|[a-z])\s?(?:栋|幢|座|号楼)))*")
_ROAD = (_ADMIN + r"(?:" + _CJK + r"|\d){1,10}?(?:路|街|大道|巷|弄|胡同)(?:" + _NUM + r"{1,2}段)?\s?\d{1,5}\s?号(?:院)?"
         + _AFTER_NUMBER)
_COMPOUND = (_ADMIN + _CJK + r"{2,10}?(?:小区|花园|公寓|大厦|家园|苑|新村)\s?" + _NUM + r"{1,4}\s?(?:号楼|栋|幢|座)"
             + _AFTER_NUMBER)
_ADDRESS = re.compile(_ROAD + "|" + _COMPOUND)
# Words that lead into an address ("我住在", "寄到", "地址是") and are not part of it.
_ADDRESS_LEAD = re.compile(r"^(?:.{0,4}?(?:住在|寄到|寄往|送到|送货到|发往|发到|位于|改成|改为)"
                           r"|(?:请|麻烦|帮我)?(?:收货|寄件人|收件人|用户|公司|新|我家|家|我)?(?:住址|地址)?(?:是|为|：|:)?"
                           r"(?:在|到|至|住)?)")


def _id_checksum_ok(number: str) -> bool:
    weights = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
    total = sum(int(d) * w for d, w in zip(number[:17], weights))
    return "10x98765432"[total % 11] == number[17]


def _valid_date(year: int, month: int, day: int) -> bool:
    try:
        return date(year, month, day) <= date.today()
    except ValueError:
        return False


def _luhn_ok(number: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(number)):
        digit = int(char) * (2 if index % 2 else 1)
        total += digit - 9 if digit > 9 else digit
    return total % 10 == 0


def _is_identifier(view: str, start: int) -> bool:
    return bool(_IDENTIFIER_CONTEXT.search(view[max(0, start - 16):start]))


def _id_candidates(view: str) -> list[tuple[int, int]]:
    found = []
    for match in _ID18.finditer(view):
        number = re.sub(r"\s", "", match.group())
        if _valid_date(int(number[6:10]), int(number[10:12]), int(number[12:14])) and _id_checksum_ok(number) \
                and not _is_identifier(view, match.start()):
            found.append(match.span())
    for match in _ID15.finditer(view):
        number = match.group()
        named = re.search(r"(?:身份证|证件)[^\n，。]{0,6}$", view[max(0, match.start() - 10):match.start()])
        if named and _valid_date(1900 + int(number[6:8]), int(number[8:10]), int(number[10:12])):
            found.append(match.span())
    return found


def _card_candidates(view: str) -> list[tuple[int, int]]:
    found = []
    for match in _CARD.finditer(view):
        digits = re.sub(r"\D", "", match.group())
        if 16 <= len(digits) <= 19 and _luhn_ok(digits) and not _is_identifier(view, match.start()):
            found.append(match.span())
    return found


def _address_candidates(view: str) -> list[tuple[int, int]]:
    found = []
    for match in _ADDRESS.finditer(view):
        lead = _ADDRESS_LEAD.match(match.group())
        start = match.start() + (lead.end() if lead else 0)
        if match.end() - start >= 6:
            found.append((start, match.end()))
    return found


def find_pii(text: str) -> list[PiiSpan]:
    """Personal-data spans in `text`, in order, never overlapping (an 身份证 beats a bank card or phone inside it)."""
    if not text:
        return []
    view = fold(text)
    candidates: list[tuple[PiiKind, tuple[int, int]]] = []
    candidates += [("身份证", span) for span in _id_candidates(view.text)]
    candidates += [("银行卡", span) for span in _card_candidates(view.text)]
    candidates += [("邮箱", m.span()) for m in _EMAIL.finditer(view.text)]
    candidates += [("手机号", m.span()) for m in _MOBILE.finditer(view.text) if not _is_identifier(view.text, m.start())]
    candidates += [("电话", m.span()) for m in _LANDLINE.finditer(view.text)
                   if not _SERVICE_LINE.match(re.sub(r"\D", "", m.group()))]
    candidates += [("地址", span) for span in _address_candidates(view.text)]
    taken: list[tuple[int, int]] = []
    spans: list[PiiSpan] = []
    for kind, (lo, hi) in candidates:          # earlier kinds win an overlap
        if any(lo < t_hi and t_lo < hi for t_lo, t_hi in taken):
            continue
        taken.append((lo, hi))
        start, end = view.span(lo, hi)
        spans.append(PiiSpan(kind=kind, start=start, end=end, text=text[start:end]))
    return sorted(spans, key=lambda s: s.start)
