import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';

/**
 * Awaits a conditional write whose failed condition means "nothing to do" (done already by someone else, gone,
 * or no longer ours): true when it was written, false when its condition failed. Any other error propagates.
 */
export async function writtenUnlessConditionFailed(write: Promise<unknown>): Promise<boolean> {
  try {
    await write;
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}
