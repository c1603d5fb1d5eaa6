// Compiled (never run) by `npm test`: askd-client/ai-sdk as an AI SDK 7 app
// types it, by the package's subpath. Lines marked @ts-expect-error must fail.

import { generateText, tool, type ModelMessage, type ToolApprovalResponse } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { z } from 'zod';

import { Agent } from 'askd-client';
import {
  approveToolCalls,
  askToolApprovals,
  collectToolApprovals,
  toolApproval,
  toolApprovalMessage,
  uiApprovalResponse,
  type PendingToolApproval,
  type ToolApprovalDecisions,
} from 'askd-client/ai-sdk';

const tools = {
  deploy: tool({
    inputSchema: z.object({ env: z.enum(['staging', 'production']) }),
    execute: async ({ env }) => `deployed to ${env}`,
  }),
};
const model = new MockLanguageModelV4();
const agent = new Agent({ url: 'http://127.0.0.1:8765', token: 'token' });

export async function run(): Promise<void> {
  const messages: ModelMessage[] = [{ role: 'user', content: 'ship it' }];
  const result = await generateText({ model, tools, toolApproval: toolApproval(['deploy']), messages });
  messages.push(...result.response.messages);
  const responses: ToolApprovalResponse[] = await approveToolCalls(result, { agent, session: 's1', userId: 'alice', tools });
  messages.push(toolApprovalMessage(responses));
  await generateText({ model, tools, toolApproval: toolApproval((call) => call.toolName === 'deploy'), messages });

  const asked: ToolApprovalDecisions = await askToolApprovals(messages, { agent, session: 's1', to: ['alice', 'bob'], quorum: 2 });
  const pending: PendingToolApproval[] = asked.pending;
  const requestId: string = pending[0].requestId;
  void requestId;
  await collectToolApprovals(messages, { agent, session: 's1', userId: 'alice', wait: true, timeoutMs: 60_000, verifyReceipts: false });
  const args: { id: string; approved: boolean; reason?: string } = uiApprovalResponse(responses[0]);
  void args;
  // @ts-expect-error: a session is required
  await approveToolCalls(result, { agent });
}
