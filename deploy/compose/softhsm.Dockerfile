# syntax=docker/dockerfile:1
# Development only, for compose's `hsm` profile: the signer's image plus SoftHSM2, a software PKCS#11 token.
# A software token keeps its keys on the same disk as the signer: it shows the pkcs11 store working, it protects
# nothing. Build the signer's image first (`docker compose build signer`); compose builds this one from it.
ARG SIGNER_IMAGE=localhost/sa-forge-signer:latest
FROM ${SIGNER_IMAGE}
USER 0:0
RUN apt-get update \
 && apt-get install -y --no-install-recommends softhsm2 \
 && rm -rf /var/lib/apt/lists/* \
 && install -d -m 0700 -o 10001 -g 10001 /var/lib/softhsm/tokens
USER 10001:10001
