"""Browser-side assets of the audit app: keyboard shortcuts (head script) and styles.

Shortcuts: 1–5 pick a score, A agrees with the judge, Enter saves and opens the next item. They never fire while
the expert types (text inputs, text areas, IME composition), so a reason can contain "1" or "A".
"""
from __future__ import annotations

KEYBOARD_HEAD = """
<script>
(() => {
  if (window.__rubricevalAuditKeys) return;
  window.__rubricevalAuditKeys = true;
  const TEXT_INPUTS = new Set(['text', 'search', 'email', 'password', 'number', 'url', 'tel', '']);
  const isTyping = (el) => {
    if (!el) return false;
    if (el.isContentEditable) return true;
    const tag = el.tagName;
    if (tag === 'TEXTAREA' || tag === 'SELECT') return true;
    return tag === 'INPUT' && TEXT_INPUTS.has((el.getAttribute('type') || '').toLowerCase());
  };
  const clickButton = (id) => {
    const host = document.getElementById(id);
    if (!host) return false;
    const button = host.tagName === 'BUTTON' ? host : host.querySelector('button');
    if (!button || button.disabled) return false;
    button.click();
    return true;
  };
  document.addEventListener('keydown', (event) => {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.isComposing || event.keyCode === 229) return;          // an IME (e.g. pinyin) is composing
    if (isTyping(event.target)) return;
    if (!document.getElementById('audit-item')) return;
    const tag = event.target && event.target.tagName;
    if (/^[1-5]$/.test(event.key)) {
      const radio = document.querySelector(`#score-radio input[type="radio"][value="${event.key}"]`);
      if (radio) { radio.click(); event.preventDefault(); }
    } else if (event.key === 'a' || event.key === 'A') {
      if (clickButton('agree-btn')) event.preventDefault();
    } else if (event.key === 'Enter') {
      if (tag === 'BUTTON' || tag === 'A') return;                     // Enter already activates a focused button
      if (clickButton('save-btn')) event.preventDefault();
    }
  });
})();
</script>
"""

APP_CSS = """
.audit-panel { font-size: 0.95rem; line-height: 1.5; }
.audit-sec { margin: 0 0 0.8rem 0; }
.audit-sec h4 { margin: 0 0 0.25rem 0; font-size: 0.8rem; text-transform: uppercase; letter-spacing: 0.04em;
  opacity: 0.7; }
.audit-body { padding: 0.45rem 0.6rem; border-radius: 6px; background: var(--block-background-fill);
  border: 1px solid var(--border-color-primary); }
.audit-meta { font-size: 0.85rem; opacity: 0.85; margin-bottom: 0.5rem; }
.tag { display: inline-block; padding: 0 0.4rem; border-radius: 4px; background: var(--color-accent-soft);
  font-size: 0.8rem; }
mark.ev-span { background: #fde68a; color: #111; border-radius: 3px; padding: 0 2px; }
.ctx-list { margin: 0; padding-left: 1.2rem; }
.ctx-list li { margin-bottom: 0.4rem; }
.ctx-badge { font-size: 0.75rem; padding: 0 0.35rem; border-radius: 4px; margin-left: 0.3rem; }
.ctx-none { background: #e5e7eb; color: #374151; }
.ctx-relevant { background: #bbf7d0; color: #14532d; }
.ctx-irrelevant { background: #fecaca; color: #7f1d1d; }
.ctx-ref { background: #dbeafe; color: #1e3a8a; }
.gt-diff { margin-top: 0.4rem; }
del { background: #fecaca; color: #7f1d1d; }
ins { background: #bbf7d0; color: #14532d; text-decoration: none; border-bottom: 1px solid #15803d; }
.levels { margin: 0; padding-left: 0; list-style: none; }
.levels li { padding: 0.15rem 0.3rem; border-radius: 4px; }
.levels li.judge-level { background: var(--color-accent-soft); outline: 1px solid var(--color-accent); }
.judge-score { font-size: 1.6rem; font-weight: 700; margin-right: 0.4rem; }
.unscored { color: #b45309; font-weight: 600; }
.feedback { margin-top: 0.3rem; }
.ev-table { width: 100%; border-collapse: collapse; font-size: 0.88rem; }
.ev-table td { border-top: 1px solid var(--border-color-primary); padding: 0.2rem 0.3rem; vertical-align: top; }
.ev-table tr.ev-fail td { background: rgba(239, 68, 68, 0.08); }
#progress-bar { font-weight: 600; }
/* Gradio clips its container with overflow:hidden, which disables position:sticky; clip does not. */
.gradio-container { overflow: clip !important; }
/* The verdict controls stay in view while the expert scrolls through a long rubric or evidence list. */
#verdict-actions { position: sticky; top: 0; z-index: 5; background: var(--background-fill-primary);
  border: 1px solid var(--border-color-primary); border-radius: 8px; padding: 0.4rem;
  box-shadow: 0 4px 12px rgba(0, 0, 0, 0.08); }
#audit-status p { margin: 0; }
#pager { align-items: center; }
#page-info { text-align: center; }
#audit-status .conflict { color: #b91c1c; font-weight: 600; }
.kbd-help kbd { border: 1px solid var(--border-color-primary); border-radius: 3px; padding: 0 0.3rem;
  font-size: 0.8rem; }
"""
