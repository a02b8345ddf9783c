/** `sa-forge-signer/kit`: the service as a @solana/kit signer for agent code. */
export {
  createServiceSigner,
  SignerServiceError,
  SIGNER_PROTOCOL_VERSION,
  type ServiceErrorCode,
  type ServiceReason,
  type ServiceReport,
  type ServiceSigner,
  type ServiceSignerOptions,
} from './kit-signer';
