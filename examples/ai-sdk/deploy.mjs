// An AI SDK 7 agent whose `deploy` tool runs only once a person approved it
// in askd (askd-client/ai-sdk, protocol section 21). Offline: the model is
// the AI SDK's own scripted mock, which asks to deploy and then reports.
//
//   askd serve                                   # in another terminal
//   askd open --user alice                       # alice's inbox, to approve in
//   cd ../../clients/js && npm ci && npm run build && cd -
//   npm install
//   ASKD_URL=http://127.0.0.1:8765 ASKD_AGENT_TOKEN=$(askd token issue --role agent) npm start
//
// Deferred instead of waiting here: `askToolApprovals` asks and returns at
// once; a later process calls `collectToolApprovals` with the saved messages.

import { generateText, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { approveToolCalls, toolApproval, toolApprovalMessage } from 'askd-client/ai-sdk';
import { z } from 'zod';

const usage = { inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 0, text: 0, reasoning: 0 } };

// The scripted model: on the user's turn it calls deploy; once it has the
// tool's result (or the denial), it says what happened.
const model = new MockLanguageModelV4({
  doGenerate: async ({ prompt }) => {
    const last = prompt.at(-1);
    if (last.role === 'user') {
      const input = JSON.stringify({ service: 'web', env: 'production' });
      return { content: [{ type: 'tool-call', toolCallId: 'call-1', toolName: 'deploy', input }], finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage, warnings: [] };
    }
    const output = last.content.find((part) => part.type === 'tool-result')?.output;
    const text = output?.type === 'execution-denied' ? `I did not deploy: ${output.reason}.` : `Done: ${output?.value}.`;
    return { content: [{ type: 'text', text }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
  },
});

const tools = {
  deploy: tool({
    description: 'Deploy a service to an environment',
    inputSchema: z.object({ service: z.string(), env: z.enum(['staging', 'production']) }),
    execute: async ({ service, env }) => `deployed ${service} to ${env}`,
  }),
};
const settings = { model, tools, toolApproval: toolApproval(['deploy']) };

const messages = [{ role: 'user', content: 'Ship the web service to production.' }];
const first = await generateText({ ...settings, messages });
messages.push(...first.response.messages);

// One askd approval per tool-approval-request; waits for alice (through
// dropped links and askd restarts) and checks each approval's receipt.
console.log('asking alice in askd...');
const responses = await approveToolCalls(first, {
  session: process.env.ASKD_SESSION ?? 'ai-sdk-example',
  userId: process.env.ASKD_USER ?? 'alice',
  agentName: 'release-bot',
  tools,
  timeoutSeconds: 600,
}); // url and token: ASKD_URL and ASKD_AGENT_TOKEN
for (const r of responses) console.log(r.approved ? 'approved' : 'denied', `(${r.reason})`);

messages.push(toolApprovalMessage(responses));
const final = await generateText({ ...settings, messages });
console.log(final.text);
