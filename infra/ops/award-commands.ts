import { resumeDistribution } from '../../lib/awards/distribute-awards.js';
import { listOpenDistributions } from '../../lib/store/awards.js';
import { required, type Commands } from './command.js';

/**
 * Distributions whose client never came back: a request without X-Request-Id that died part-way can't be
 * resumed by its client, so ops find it here and finish it (crediting only the chunks still pending).
 */
export const awardCommands: Commands = {
  'awards open': {
    usage: 'awards open',
    options: {},
    run: (_flags, ctx) => listOpenDistributions(ctx),
  },
  'awards resume': {
    usage: 'awards resume --platform CODE --request-id ID',
    options: { platform: { type: 'string', required: true }, 'request-id': { type: 'string', required: true } },
    mutates: true,
    run: async (flags, ctx, audit) => {
      const result = await resumeDistribution(ctx, required(flags, 'platform'), required(flags, 'request-id'));
      await audit.record({ platform_code: flags.platform, request_id: flags['request-id'], result });
      return result;
    },
  },
};
