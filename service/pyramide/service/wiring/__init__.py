"""The service's objects, built once per app start, grouped by the domain they serve (one module each); the
running whole is :class:`wiring.running.Running`, which ``services`` starts and stops with the app."""
