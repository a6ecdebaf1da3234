import { describe, expect, it } from 'vitest';
import { findAsset } from '../../lib/domain/assets.js';
import { validateWithdrawalAddress } from '../../lib/domain/withdrawal-address.js';

/**
 * Vectors are public examples: the bitcoin genesis address, BIP 173 / BIP 350 test vectors, the EIP-55
 * examples, well-known Solana program ids and mints. The litecoin and dogecoin ones were cross-checked
 * against an independent validator (multicoin-address-validator) when this file was written.
 */
const VALID: Record<string, string[]> = {
  bitcoin: [
    '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa', // genesis block, P2PKH
    '3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy', // P2SH
    'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq', // P2WPKH
    'BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4', // BIP 173, upper case is legal
    'bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3', // P2WSH
    'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0', // BIP 350 taproot
  ],
  ethereum: [
    '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
    '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
    '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
    '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb',
    '0x52908400098527886E0F7030069857D2E4169EE7', // all upper: no checksum to check
    '0xde709f2102306220921060314715629080e2fb77', // all lower: no checksum to check
  ],
  solana: [
    '11111111111111111111111111111111', // system program, 32 zero bytes
    'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA', // SPL token program
    'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', // USDC mint
  ],
  litecoin: [
    'LKKHMBjCU89fyFNgSRprDoD8Jb25N8uWvd', // P2PKH
    'M7zVKQKmtV5Rc7erVGVVC3khZbXxsS5HEX', // P2SH
    'ltc1qw508d6qejxtdg4y5r3zarvary0c5xw7kgmn4n9', // P2WPKH
  ],
  dogecoin: [
    'DH5yaieqoZN36fDVciNyRueRGvGLR3mr7L', // P2PKH
    'D5ERdEN1gsouFSs7zsq7VYJxyWP6dP28H1', // P2PKH
    '9rXbkMyi1S6thykRoXAZcY8fwUKYsy6cXE', // P2SH
  ],
};

const INVALID: [network: string, address: string, reason: string][] = [
  // bitcoin
  ['bitcoin', '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb', 'checksum mismatch'],
  ['bitcoin', 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdr', 'checksum mismatch or malformed bech32'],
  ['bitcoin', 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdQ', 'checksum mismatch or malformed bech32'], // mixed case
  [
    'bitcoin',
    'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd',
    'bech32 checksum variant does not match the witness version',
  ],
  [
    'bitcoin',
    'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kemeawh',
    'bech32 checksum variant does not match the witness version',
  ],
  ['bitcoin', 'BC13W508D6QEJXTDG4Y5R3ZARVARY0C5XW7KN40WF2', 'invalid witness version'],
  ['bitcoin', 'BC1QR508D6QEJXTDG4Y5R3ZARVARYV98GJ9P', 'wrong witness program length'],
  ['bitcoin', 'bc1zw508d6qejxtdg4y5r3zarvaryvqyzf3du', 'bech32 checksum variant does not match the witness version'],
  ['bitcoin', 'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v07qwwzcrf', 'invalid witness program padding'],
  ['bitcoin', 'bc1gmk9yu', 'empty witness program'],
  // valid BIP 350 encodings of outputs nobody can safely receive on yet
  ['bitcoin', 'bc1zw508d6qejxtdg4y5r3zarvaryvaxxpcs', 'unsupported witness version or program length'],
  ['bitcoin', 'BC1SW50QGDZ25J', 'unsupported witness version or program length'],
  ['bitcoin', 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx', 'belongs to another network or a testnet'],
  ['bitcoin', 'mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn', 'belongs to another network or a testnet'],
  ['bitcoin', 'DH5yaieqoZN36fDVciNyRueRGvGLR3mr7L', 'belongs to another network or a testnet'],
  ['bitcoin', '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa ', 'contains characters outside the base58 alphabet'],
  ['bitcoin', `1${'2'.repeat(60)}`, 'wrong length'],
  // ethereum
  ['ethereum', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD', 'EIP-55 checksum mismatch'],
  ['ethereum', '0x5AAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', 'EIP-55 checksum mismatch'],
  ['ethereum', '5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', 'must be 0x followed by 40 hexadecimal characters'],
  ['ethereum', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe', 'must be 0x followed by 40 hexadecimal characters'],
  ['ethereum', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeg', 'must be 0x followed by 40 hexadecimal characters'],
  // solana has no checksum: alphabet and key length are all there is to check
  ['solana', '0PjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', 'contains characters outside the base58 alphabet'],
  ['solana', '1111111111111111111111111111111', 'must encode a 32-byte public key'],
  ['solana', 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DAA', 'must encode a 32-byte public key'],
  ['solana', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', 'contains characters outside the base58 alphabet'],
  // litecoin
  ['litecoin', 'LKKHMBjCU89fyFNgSRprDoD8Jb25N8uWve', 'checksum mismatch'],
  ['litecoin', 'ltc1qw508d6qejxtdg4y5r3zarvary0c5xw7kgmn4n8', 'checksum mismatch or malformed bech32'],
  ['litecoin', '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa', 'belongs to another network or a testnet'],
  ['litecoin', '3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy', 'belongs to another network or a testnet'],
  ['litecoin', 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq', 'belongs to another network or a testnet'],
  // dogecoin
  ['dogecoin', 'DH5yaieqoZN36fDVciNyRueRGvGLR3mr7M', 'checksum mismatch'],
  ['dogecoin', 'D5ERdEN1gsouFSs7zsq7VYJxyWP6dP28H2', 'checksum mismatch'],
  ['dogecoin', 'LKKHMBjCU89fyFNgSRprDoD8Jb25N8uWvd', 'belongs to another network or a testnet'],
];

describe('validateWithdrawalAddress', () => {
  const valid = Object.entries(VALID).flatMap(([network, addresses]) =>
    addresses.map((address) => [network, address] as const),
  );

  it.each(valid)('accepts %s address %s', (network, address) => {
    expect(validateWithdrawalAddress(network, address)).toBeNull();
  });

  it.each(INVALID)('rejects %s address %j', (network, address, reason) => {
    expect(validateWithdrawalAddress(network, address)).toBe(
      `withdrawal_address: not a valid ${network} address (${reason})`,
    );
  });

  it('rejects an address valid on another chain of the registry', () => {
    expect(validateWithdrawalAddress('ethereum', '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa')).not.toBeNull();
    expect(validateWithdrawalAddress('solana', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed')).not.toBeNull();
  });

  it('rejects an empty address', () => {
    expect(validateWithdrawalAddress('bitcoin', '')).toBe('withdrawal_address: is required');
  });

  it('rejects a network it does not know', () => {
    expect(validateWithdrawalAddress('ripple', 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh')).toBe(
      "withdrawal_address: withdrawals on network 'ripple' are not supported",
    );
    expect(validateWithdrawalAddress('constructor', 'x')).toBe(
      "withdrawal_address: withdrawals on network 'constructor' are not supported",
    );
  });

  it('covers every network of a crypto asset in the registry', () => {
    for (const symbol of ['BTC', 'ETH', 'USDC', 'SOL', 'LTC', 'DOGE']) {
      const network = findAsset(symbol)?.network;
      expect(network, symbol).toBeTruthy();
      expect(VALID[network as string], `${symbol} on ${network}`).toBeDefined();
    }
  });
});
