/** `sa-forge-signer/kit`: the service as a @solana/kit signer for agent code. */
export {
  createServiceSigner,
  SignerServiceError,
  SIGNER_PROTOCOL_VERSION,
  type ServiceReport,
  type ServiceSigner,
  type ServiceSignerOptions,
} from './kit-signer';
