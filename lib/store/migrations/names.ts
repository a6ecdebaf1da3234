/**
 * Migration names, apart from their code: what serving code asks `isMigrationApplied` about, without
 * bundling the migration itself into every function that reads.
 */
export const MOVEMENT_ACCOUNT_ENTRIES = '0001-movement-account-entries';
export const ITEM_VERSIONS = '0002-item-versions';
export const TRADE_LIST_ENTRIES = '0003-trade-list-entries';
