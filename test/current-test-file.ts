/** Jest setupFilesAfterEnv: tells the socket-origin recorder which test file is running (see open-sockets.ts). */
import { noteTestFile, reportSocketsLeftOpen } from './open-sockets';

beforeAll(() => {
  reportSocketsLeftOpen(expect.getState().testPath);
  noteTestFile(expect.getState().testPath);
});
afterAll(() => noteTestFile(undefined));
