import { sha256 } from '@noble/hashes/sha2.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { base58, bech32, bech32m, createBase58check } from '@scure/base';

/**
 * On-chain address checks for withdrawals. A withdrawal cannot be recalled, so the rules lean strict: only
 * mainnet, only output types that a wallet can actually spend today, checksums always verified.
 */

const FIELD = 'withdrawal_address';
// Marked pure so that a bundle importing this module for none of its checks (the convert-withdraw execution
// imports the quote request's module for a constant) drops the codec, and with it the hashes and codecs
// (about 9 KiB): a call at the top level is otherwise kept for its possible side effects.
const base58check = /* @__PURE__ */ createBase58check(sha256);

interface UtxoChain {
  /** Version bytes of base58check addresses (P2PKH, P2SH). */
  base58Versions: readonly number[];
  /** Human-readable part of segwit addresses, or null where the chain has no segwit. */
  segwitHrp: string | null;
}

const UTXO_CHAINS: Readonly<Record<string, UtxoChain>> = {
  bitcoin: { base58Versions: [0x00, 0x05], segwitHrp: 'bc' },
  // Litecoin's old `3...` P2SH form shares Bitcoin's version byte, so a Bitcoin address pasted by mistake
  // would pass as Litecoin; only the `M...` form is accepted for P2SH.
  litecoin: { base58Versions: [0x30, 0x32], segwitHrp: 'ltc' },
  dogecoin: { base58Versions: [0x1e, 0x16], segwitHrp: null },
};

/** The result for field `withdrawal_address`: null when valid, otherwise the message. */
export function validateWithdrawalAddress(network: string, address: string): string | null {
  if (address === '') return `${FIELD}: is required`;
  const problem = addressProblem(network, address);
  if (problem === undefined) return `${FIELD}: withdrawals on network '${network}' are not supported`;
  return problem === null ? null : `${FIELD}: not a valid ${network} address (${problem})`;
}

/** undefined = unknown network; null = valid; otherwise the reason. */
function addressProblem(network: string, address: string): string | null | undefined {
  if (network === 'ethereum') return ethereumProblem(address);
  if (network === 'solana') return solanaProblem(address);
  const chain = Object.hasOwn(UTXO_CHAINS, network) ? UTXO_CHAINS[network] : undefined;
  if (chain === undefined) return undefined;
  if (chain.segwitHrp !== null && address.toLowerCase().startsWith(`${chain.segwitHrp}1`)) {
    return segwitProblem(address, chain.segwitHrp);
  }
  const problem = base58checkProblem(address, chain.base58Versions);
  // A testnet or other chain's segwit address would otherwise be reported as bad base58.
  if (problem !== null && (bech32.decodeUnsafe(address) || bech32m.decodeUnsafe(address))) {
    return 'belongs to another network or a testnet';
  }
  return problem;
}

function base58checkProblem(address: string, versions: readonly number[]): string | null {
  if (!isBase58(address)) return 'contains characters outside the base58 alphabet';
  // 25 bytes never take more than 35 characters; the bound also keeps the quadratic decode cheap.
  if (address.length > 35) return 'wrong length';
  let payload: Uint8Array;
  try {
    payload = base58check.decode(address);
  } catch {
    return 'checksum mismatch';
  }
  // One version byte plus a 20-byte hash, for both P2PKH and P2SH.
  if (payload.length !== 21) return 'wrong length';
  const version = payload[0] as number;
  if (!versions.includes(version)) return 'belongs to another network or a testnet';
  return null;
}

/**
 * BIP 173 / BIP 350. Only witness v0 (P2WPKH, P2WSH) and v1 with a 32-byte program (taproot) are accepted:
 * other versions and lengths are valid encodings but currently spendable by anyone, so coins sent there
 * could be lost.
 */
function segwitProblem(address: string, hrp: string): string | null {
  const asBech32 = bech32.decodeUnsafe(address) ?? undefined;
  const decoded = asBech32 ?? bech32m.decodeUnsafe(address);
  if (!decoded) return 'checksum mismatch or malformed bech32';
  if (decoded.prefix !== hrp) return 'belongs to another network or a testnet';
  const [version, ...programWords] = decoded.words;
  if (version === undefined) return 'empty witness program';
  if (version > 16) return 'invalid witness version';
  // BIP 350: v0 must use the original bech32 checksum, every later version bech32m.
  if ((version === 0) !== (asBech32 !== undefined)) return 'bech32 checksum variant does not match the witness version';
  const program = bech32.fromWordsUnsafe(programWords);
  if (!program) return 'invalid witness program padding';
  if (version === 0) return program.length === 20 || program.length === 32 ? null : 'wrong witness program length';
  if (version === 1 && program.length === 32) return null;
  return 'unsupported witness version or program length';
}

/** EIP-55: mixed case carries a checksum and must match it; all-lower or all-upper carries none. */
function ethereumProblem(address: string): string | null {
  if (!/^0x[0-9a-fA-F]{40}$/.test(address)) return 'must be 0x followed by 40 hexadecimal characters';
  const hex = address.slice(2);
  const lower = hex.toLowerCase();
  if (hex === lower || hex === hex.toUpperCase()) return null;
  const hash = keccak_256(new TextEncoder().encode(lower));
  for (let i = 0; i < hex.length; i++) {
    const char = hex[i] as string;
    if (char >= '0' && char <= '9') continue;
    const byte = hash[i >> 1] as number;
    const nibble = i % 2 === 0 ? byte >> 4 : byte & 0x0f;
    const shouldBeUpper = nibble >= 8;
    if ((char === char.toUpperCase()) !== shouldBeUpper) return 'EIP-55 checksum mismatch';
  }
  return null;
}

/** A Solana address is a bare base58 ed25519 public key: no checksum, so only alphabet and length can be checked. */
function solanaProblem(address: string): string | null {
  if (!isBase58(address)) return 'contains characters outside the base58 alphabet';
  // 32 bytes never take more than 44 characters; the bound also keeps the quadratic decode cheap.
  if (address.length > 44) return 'must encode a 32-byte public key';
  return base58.decode(address).length === 32 ? null : 'must encode a 32-byte public key';
}

function isBase58(text: string): boolean {
  return /^[1-9A-HJ-NP-Za-km-z]+$/.test(text);
}
