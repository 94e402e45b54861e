"""The HTTP routes, one module per profile; `app.py` assembles them."""
