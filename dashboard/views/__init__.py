"""The dashboard's page scripts, run by ``st.navigation`` in ``dashboard/app.py`` (not imported).

A package only so that they ship with the project.
"""
