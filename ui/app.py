"""The expert audit app (Gradio): a queue of judge verdicts, one item side by side, agree/override, ground-truth
corrections, agreement statistics and a corrected-dataset export.

`launch()` is what `rubriceval audit` calls; `build_app()` returns the Blocks for tests and embedding. The app reads
and writes only the run store (SQLite) and the export folder.
"""
from __future__ import annotations

import functools
import ipaddress
import os
import re
import time
from pathlib import Path
from typing import Any, Callable

import gradio as gr

from rubriceval.errors import RubricEvalError
from rubriceval.store.audit import AuditStore
from rubriceval.store.export import export_corrected_dataset
from ui import agreement_panel
from ui.actions import ItemView, agree, edit_ground_truth, open_item, save_verdict
from ui.assets import APP_CSS, KEYBOARD_HEAD
from ui.queue import (ANY, ORDER_CHOICES, PAGE_SIZE, QUEUE_COLUMNS, STATUS_CHOICES, AuditSession, make_filter,
                      open_queue, page_frame, page_label, progress_markdown)

Auth = Callable[[str, str], bool] | tuple[str, str] | list[tuple[str, str]]

KEY_HELP = ('<div class="kbd-help">Keys (outside text boxes): <kbd>1</kbd>–<kbd>5</kbd> score · <kbd>A</kbd> agree '
            'with the judge and go on · <kbd>Enter</kbd> save and go to the next item.</div>')


def is_loopback(host: str) -> bool:
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def require_auth_off_loopback(host: str, auth: Auth | None) -> None:
    """Anyone on the network could read customer conversations and sign audits with any name: refuse."""
    if not is_loopback(host) and auth is None:
        raise RubricEvalError(f"refusing to serve the audit app on {host} without authentication",
                              field="host", hint="pass auth (user/password), or bind to 127.0.0.1")


def default_export_dir(store_path: str | Path) -> Path:
    return Path(store_path).resolve().parent / "exports"


def _user_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Show a user mistake (missing reason, no name…) as a Gradio error message instead of a stack trace."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except RubricEvalError as exc:
            # Not logged as an exception: a missing reason is the expert's slip, not a server fault.
            raise gr.Error(exc.message + (f" ({exc.hint})" if exc.hint else ""), duration=8,
                           print_exception=False) from None
    return wrapper


def _who(expert: str, request: gr.Request | None) -> str:
    """With authentication the login name is the expert; the free-text name is only used on loopback."""
    username = getattr(request, "username", None) if request is not None else None
    return username or (expert or "")


def build_app(store_path: str | Path, run: str | None = None, export_dir: str | Path | None = None,
              auth_enabled: bool = False) -> gr.Blocks:
    store = AuditStore(store_path)
    export_root = Path(export_dir) if export_dir else default_export_dir(store_path)
    runs = store.runs.list_runs()
    if not runs:
        raise RubricEvalError("the store holds no runs yet", file=str(store_path), hint="run `rubriceval run` first")
    initial_run = store.resolve(run) if run else runs[-1].run_id
    run_choices = [(f"{r.name} · {r.status} · {r.n_samples} samples", r.run_id) for r in runs]
    facets = store.facets(initial_run)

    with gr.Blocks(title="rubriceval · expert audit", analytics_enabled=False) as app:
        session = gr.State(AuditSession())
        agreement_state = gr.State([])
        with gr.Row(equal_height=True):
            expert = gr.Textbox(label="Your name", placeholder="required before saving", elem_id="expert-name",
                                scale=1, interactive=not auth_enabled)
            run_dd = gr.Dropdown(label="Run", choices=run_choices, value=initial_run, scale=2, elem_id="run-dd")
            progress = gr.Markdown(elem_id="progress-bar")
        with gr.Tabs():
            with gr.Tab("Audit", id="audit"):
                with gr.Accordion("Queue filters", open=True):
                    # Custom values allowed: another run's facets may be picked before the choices refresh, and
                    # the values only ever reach SQL as bound parameters.
                    with gr.Row(equal_height=True):
                        scorer_dd = gr.Dropdown(label="Rubric", choices=[ANY, *facets["scorers"]], value=ANY,
                                                allow_custom_value=True, min_width=150, elem_id="filter-rubric")
                        tag_dd = gr.Dropdown(label="Tag", choices=[ANY, *facets["tags"]], value=ANY,
                                             allow_custom_value=True, min_width=110, elem_id="filter-tag")
                        intent_dd = gr.Dropdown(label="Intent", choices=[ANY, *facets["intents"]], value=ANY,
                                                allow_custom_value=True, min_width=120, elem_id="filter-intent")
                        score_min = gr.Number(1, label="Judge ≥", minimum=1, maximum=5, precision=0, scale=0,
                                              min_width=80, elem_id="score-min")
                        score_max = gr.Number(5, label="Judge ≤", minimum=1, maximum=5, precision=0, scale=0,
                                              min_width=80, elem_id="score-max")
                        status_dd = gr.Dropdown(label="Show", choices=STATUS_CHOICES, value="all", min_width=170,
                                                elem_id="filter-status")
                        order_dd = gr.Dropdown(label="Order", choices=ORDER_CHOICES, value="judge_asc",
                                               min_width=170, elem_id="filter-order")
                        apply_btn = gr.Button("Open queue", variant="primary", scale=0, min_width=120,
                                              elem_id="apply-btn")
                queue_df = gr.Dataframe(headers=QUEUE_COLUMNS, interactive=False, wrap=False, max_height=230,
                                        elem_id="queue-table", label="Queue (click a row to open it)",
                                        column_widths=["5%", "12%", "13%", "6%", "12%", "5%", "5%", "10%", "32%"])
                with gr.Row(elem_id="pager"):
                    prev_page_btn = gr.Button("◀ Previous page", size="sm", scale=0, min_width=140,
                                              elem_id="prev-page-btn")
                    page_info = gr.Markdown(elem_id="page-info")
                    next_page_btn = gr.Button("Next page ▶", size="sm", scale=0, min_width=140,
                                              elem_id="next-page-btn")
                    jump_to = gr.Number(value=1, precision=0, minimum=1, show_label=False, container=False,
                                        scale=0, min_width=90, elem_id="jump-to")
                    go_btn = gr.Button("Open item #", size="sm", scale=0, min_width=120, elem_id="go-btn")
                item_title = gr.Markdown(elem_id="item-title")
                gr.HTML(KEY_HELP)
                with gr.Row(elem_id="audit-item"):
                    with gr.Column(scale=1):
                        sample_view = gr.HTML(elem_id="sample-view")
                        with gr.Accordion("Correct the ground truth / mark contexts", open=False,
                                          elem_id="gt-accordion"):
                            gt_box = gr.Textbox(label="Ground truth (reference answer)", lines=4, elem_id="gt-box")
                            ctx_box = gr.CheckboxGroup(label="Relevant retrieved contexts", elem_id="ctx-box")
                            save_gt_btn = gr.Button("Save ground truth", elem_id="save-gt-btn")
                        history_view = gr.HTML(elem_id="gt-history")
                    with gr.Column(scale=1):
                        with gr.Column(elem_id="verdict-actions"):
                            score_radio = gr.Radio(choices=["1", "2", "3", "4", "5"], label="Your score",
                                                   elem_id="score-radio")
                            reason_box = gr.Textbox(label="Reason (required when you differ from the judge)",
                                                    lines=1, elem_id="reason-box")
                            with gr.Row():
                                agree_btn = gr.Button("Agree with judge (A)", size="md", elem_id="agree-btn")
                                save_btn = gr.Button("Save & next (Enter)", variant="primary", size="md",
                                                     elem_id="save-btn")
                            with gr.Row():
                                prev_btn = gr.Button("◀ Previous", size="sm", elem_id="prev-btn")
                                next_btn = gr.Button("Skip ▶", size="sm", elem_id="next-btn")
                                reload_btn = gr.Button("Reload item", size="sm", elem_id="reload-btn")
                            status = gr.Markdown(elem_id="audit-status")
                        judge_view = gr.HTML(elem_id="judge-view")
            with gr.Tab("Agreement", id="agreement"):
                refresh_btn = gr.Button("Compute agreement", variant="primary", elem_id="agreement-btn")
                agreement_headline = gr.Markdown(elem_id="agreement-headline")
                agreement_table = gr.Dataframe(headers=agreement_panel.SUMMARY_COLUMNS, interactive=False,
                                               label="Judge vs experts, per rubric version", elem_id="agreement-table")
                rubric_pick = gr.Dropdown(label="Rubric version", choices=[], elem_id="agreement-rubric")
                with gr.Row():
                    confusion_table = gr.Dataframe(interactive=False, label="Confusion (rows: expert, columns: judge)",
                                                   elem_id="confusion-table")
                    worst_table = gr.Dataframe(interactive=False, label="Largest disagreements",
                                               elem_id="worst-table")
            with gr.Tab("Export", id="export"):
                gr.Markdown(f"Writes the run's dataset with every ground-truth correction applied, as a new version "
                            f"(JSONL and Excel) with provenance in each corrected row's metadata, into "
                            f"`{export_root}`.")
                export_btn = gr.Button("Export corrected dataset", variant="primary", elem_id="export-btn")
                export_status = gr.Markdown(elem_id="export-status")

        item_outputs = [session, item_title, sample_view, judge_view, history_view, gt_box, ctx_box, score_radio,
                        reason_box, progress, queue_df, page_info, status]
        filter_inputs = [expert, run_dd, scorer_dd, tag_dd, intent_dd, score_min, score_max, status_dd, order_dd]

        def render(state: AuditSession, who: str, view: ItemView, message: str) -> list[Any]:
            return [state, f"### {view.title}" if view.title else "", view.sample_html, view.judge_html,
                    view.history_html, view.ground_truth,
                    gr.update(choices=view.context_choices, value=view.relevant_contexts),
                    gr.update(value=view.my_score), view.my_reason,
                    progress_markdown(store.progress(state.run_id, who), state, who),
                    page_frame(store, state), page_label(state), message]

        def keep_item(state: AuditSession, who: str, message: str) -> list[Any]:
            """Leave what the expert typed in place (after a conflict), refresh only progress and status."""
            return [state, *[gr.update()] * 8, progress_markdown(store.progress(state.run_id, who), state, who),
                    gr.update(), gr.update(), message]

        @_user_errors
        def do_open_queue(name, run_id, scorer, tag, intent, low, high, show, order,
                          request: gr.Request) -> list[Any]:
            who = _who(name, request)
            started = time.perf_counter()
            state = open_queue(store, run_id or initial_run, make_filter(who, scorer, tag, intent, low, high, show, order))
            view = open_item(store, state, 0, who)
            out = render(state, who, view, "")
            out[-1] = f"Queue opened in {time.perf_counter() - started:.2f} s."
            return out

        def do_init(run_id: str, request: gr.Request) -> list[Any]:
            who = _who("", request)
            facets = store.facets(run_id)
            queue_out = do_open_queue(who, run_id, ANY, ANY, ANY, 1, 5, "all", "judge_asc", request)
            return [gr.update(value=who) if who else gr.update(),
                    gr.update(choices=[ANY, *facets["scorers"]], value=ANY),
                    gr.update(choices=[ANY, *facets["tags"]], value=ANY),
                    gr.update(choices=[ANY, *facets["intents"]], value=ANY), *queue_out]

        @_user_errors
        def do_open_item(name, state: AuditSession, number, request: gr.Request) -> list[Any]:
            who = _who(name, request)
            if number is None:
                raise RubricEvalError("type an item number first")
            return render(state, who, open_item(store, state, int(number) - 1, who), "")

        def step(offset: int) -> Callable[..., list[Any]]:
            @_user_errors
            def handler(name, state: AuditSession, request: gr.Request) -> list[Any]:
                who = _who(name, request)
                return render(state, who, open_item(store, state, state.index + offset, who), "")
            return handler

        def change_page(offset: int) -> Callable[..., list[Any]]:
            def handler(state: AuditSession) -> tuple[Any, Any, Any]:
                state.page = max(0, min(state.page + offset, state.n_pages - 1))
                return state, page_frame(store, state), page_label(state)
            return handler

        @_user_errors
        def do_select(name, state: AuditSession, evt: gr.SelectData, request: gr.Request) -> list[Any]:
            who = _who(name, request)
            row = evt.index[0] if isinstance(evt.index, (list, tuple)) else evt.index
            return render(state, who, open_item(store, state, state.page * PAGE_SIZE + int(row), who), "")

        def after_save(state: AuditSession, who: str, outcome) -> list[Any]:
            if not outcome.saved:
                return keep_item(state, who, outcome.message)
            last = state.index >= len(state.rows) - 1
            view = open_item(store, state, state.index if last else state.index + 1, who)
            return render(state, who, view, outcome.message + (" End of the queue." if last else ""))

        @_user_errors
        def do_save(name, state: AuditSession, score, reason, request: gr.Request) -> list[Any]:
            who = _who(name, request)
            return after_save(state, who, save_verdict(store, state, who, score, reason or ""))

        @_user_errors
        def do_agree(name, state: AuditSession, request: gr.Request) -> list[Any]:
            who = _who(name, request)
            return after_save(state, who, agree(store, state, who))

        @_user_errors
        def do_edit_gt(name, state: AuditSession, ground_truth, relevant, request: gr.Request) -> list[Any]:
            who = _who(name, request)
            outcome = edit_ground_truth(store, state, who, ground_truth or "", relevant)
            if not outcome.saved:
                return keep_item(state, who, outcome.message)
            # Stay on the item, re-rendered: the diff and the history show what was just saved.
            return render(state, who, open_item(store, state, state.index, who), outcome.message)

        @_user_errors
        def do_reload(name, state: AuditSession, request: gr.Request) -> list[Any]:
            who = _who(name, request)
            return render(state, who, open_item(store, state, state.index, who), "Reloaded the stored state.")

        def do_run_change(run_id: str) -> list[Any]:
            facets = store.facets(run_id)
            return [gr.update(choices=[ANY, *facets["scorers"]], value=ANY),
                    gr.update(choices=[ANY, *facets["tags"]], value=ANY),
                    gr.update(choices=[ANY, *facets["intents"]], value=ANY)]

        @_user_errors
        def do_agreement(run_id: str) -> list[Any]:
            results = agreement_panel.compute(store, run_id or initial_run)
            first = results[0] if results else None
            return [results, agreement_panel.headline(results), agreement_panel.summary_frame(results),
                    gr.update(choices=[r.key for r in results], value=first.key if first else None),
                    agreement_panel.confusion_frame(first), agreement_panel.worst_frame(first)]

        def do_pick_rubric(results: list, key: str) -> list[Any]:
            chosen = next((r for r in results if r.key == key), None)
            return [agreement_panel.confusion_frame(chosen), agreement_panel.worst_frame(chosen)]

        @_user_errors
        def do_export(run_id: str) -> str:
            run_id = run_id or initial_run
            name = store.runs.run_info(run_id).name
            stem = re.sub(r"[^\w.-]+", "_", name) + time.strftime("-corrected-%Y%m%d-%H%M%S")
            lines = []
            for suffix in (".jsonl", ".xlsx"):
                target = (export_root / (stem + suffix)).resolve()
                summary = export_corrected_dataset(store.path, run_id, target)
                lines.append(f"- `{summary.path}`: {summary.n_samples} samples, {summary.n_corrected} corrected")
            return "Exported:\n" + "\n".join(lines)

        app.load(do_init, inputs=[run_dd], outputs=[expert, scorer_dd, tag_dd, intent_dd, *item_outputs],
                 api_visibility="private")
        apply_btn.click(do_open_queue, inputs=filter_inputs, outputs=item_outputs, api_name="open_queue")
        run_dd.change(do_run_change, inputs=[run_dd], outputs=[scorer_dd, tag_dd, intent_dd],
                      api_visibility="private").then(do_open_queue, inputs=filter_inputs, outputs=item_outputs,
                                                    api_visibility="private")
        go_btn.click(do_open_item, inputs=[expert, session, jump_to], outputs=item_outputs, api_name="open_item")
        queue_df.select(do_select, inputs=[expert, session], outputs=item_outputs, api_visibility="private")
        prev_page_btn.click(change_page(-1), inputs=[session], outputs=[session, queue_df, page_info],
                            api_visibility="private")
        next_page_btn.click(change_page(+1), inputs=[session], outputs=[session, queue_df, page_info],
                            api_visibility="private")
        prev_btn.click(step(-1), inputs=[expert, session], outputs=item_outputs, api_name="previous_item")
        next_btn.click(step(+1), inputs=[expert, session], outputs=item_outputs, api_name="next_item")
        reload_btn.click(do_reload, inputs=[expert, session], outputs=item_outputs, api_name="reload_item")
        save_btn.click(do_save, inputs=[expert, session, score_radio, reason_box], outputs=item_outputs,
                       api_name="save_verdict")
        reason_box.submit(do_save, inputs=[expert, session, score_radio, reason_box], outputs=item_outputs,
                          api_visibility="private")
        agree_btn.click(do_agree, inputs=[expert, session], outputs=item_outputs, api_name="agree")
        save_gt_btn.click(do_edit_gt, inputs=[expert, session, gt_box, ctx_box], outputs=item_outputs,
                          api_name="edit_ground_truth")
        refresh_btn.click(do_agreement, inputs=[run_dd],
                          outputs=[agreement_state, agreement_headline, agreement_table, rubric_pick,
                                   confusion_table, worst_table], api_name="agreement")
        rubric_pick.change(do_pick_rubric, inputs=[agreement_state, rubric_pick],
                           outputs=[confusion_table, worst_table], api_name="agreement_detail")
        export_btn.click(do_export, inputs=[run_dd], outputs=[export_status], api_name="export")
    app.audit_store = store          # for tests and for closing the connection with the app
    return app


def launch(store_path: str | Path, run: str | None = None, host: str = "127.0.0.1", port: int = 7860,
           export_dir: str | Path | None = None, auth: Auth | None = None, *, block: bool = True,
           quiet: bool = False) -> gr.Blocks:
    """Serve the audit app. Off loopback, `auth` is mandatory. block=False returns once the server is up."""
    require_auth_off_loopback(host, auth)
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")   # no version check or telemetry calls
    app = build_app(store_path, run=run, export_dir=export_dir, auth_enabled=auth is not None)
    app.queue(default_concurrency_limit=4)
    app.launch(server_name=host, server_port=port, auth=auth, prevent_thread_lock=not block, show_error=True,
               ssr_mode=False, quiet=quiet, head=KEYBOARD_HEAD, css=APP_CSS, footer_links=[])
    return app
