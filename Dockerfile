# Placeholder until the service issue (#3): the container image of the game service (multi-stage, non-root, with a
# HEALTHCHECK and the locked dependencies) is built here. Nothing builds from this file yet.
