"""The rubric studio (Gradio): author, test, preview, try and version a rubric in the browser (ui/studio/app.py)."""
