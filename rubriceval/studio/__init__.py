"""The rubric studio's logic, without Gradio: the rubric form and its YAML (form.py), the scorecard form (card_form.py),
trying a draft (workbench.py, trial.py, scorecards.py), versions in the folder or the run store (versions.py),
validation messages in the page's language (messages.py), drafts proposed by the judge (drafting.py, selection.py).
The app is ui/studio/."""
