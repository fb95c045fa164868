"""The team app's page in the app's language (the store's, or --lang), login page included.

Gradio picks the language of its own words (the login form, toasts, status messages) in the browser from
`navigator.language`, so a Chinese store's team saw an English login page on an English browser. The page served
to the browser therefore starts with a constant script that sets that language to the app's before Gradio's bundle
reads it. `I18N` fills a key Gradio's frontend shows raw otherwise (the status tracker's `common.complete` beside a
warning, issue 32.13).
"""
from __future__ import annotations

from typing import Any

import gradio as gr

from rubriceval.i18n import Lang

BROWSER_LOCALES: dict[str, str] = {"zh": "zh-CN", "en": "en"}
I18N = gr.I18n(en={"common.complete": "Complete"}, **{"zh-CN": {"common.complete": "完成"}})


def locale_script(lang: Lang) -> bytes:
    locale = BROWSER_LOCALES[lang]
    return (f'<script>(()=>{{const l="{locale}";for(const[k,v]of[["language",l],["languages",[l]]])'
            "try{Object.defineProperty(Navigator.prototype,k,{get:()=>v,configurable:true})}catch(e){}})();"
            "</script>").encode()


class PageLanguageMiddleware:
    """ASGI middleware: every HTML page the app serves gets `locale_script(lang)` first in its <head>."""

    def __init__(self, app: Any, lang: Lang = "en"):
        self.app = app
        self.script = locale_script(lang)

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope.get("type") != "http" or scope.get("method") != "GET":
            await self.app(scope, receive, send)
            return
        start: dict[str, Any] = {}
        body: list[bytes] = []

        async def send_with_script(message: dict) -> None:
            if message["type"] == "http.response.start":
                headers = dict(message.get("headers", []))
                if not headers.get(b"content-type", b"").startswith(b"text/html") or b"content-encoding" in headers:
                    await send(message)
                    return
                start.update(message)
                return
            if not start:                            # not an HTML page: passed through untouched
                await send(message)
                return
            body.append(message.get("body", b""))
            if message.get("more_body"):
                return
            page = b"".join(body).replace(b"<head>", b"<head>" + self.script, 1)
            headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
            await send({**start, "headers": [*headers, (b"content-length", str(len(page)).encode())]})
            await send({"type": "http.response.body", "body": page})

        await self.app(scope, receive, send_with_script)
